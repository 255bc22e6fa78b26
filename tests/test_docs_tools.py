"""docs/tools.md promises a complete scripting example: run every ```python block of it, in
order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1] / "docs" / "tools.md"
_PYTHON_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def test_scripting_example_runs(capsys):
    text = TOOLS.read_text()
    blocks = [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _PYTHON_BLOCK.finditer(text)]
    assert blocks, "docs/tools.md has no ```python block"
    namespace: dict = {}
    for line, code in blocks:
        exec(compile(code, f"{TOOLS}:{line}", "exec"), namespace)
    assert '"ttg.convert_layout"' in capsys.readouterr().out
