"""Runs the whole lit suite (tests/lit), so that the one pytest command covers it too."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

LIT_DIR = Path(__file__).parent / "lit"


def test_lit_suite():
    result = subprocess.run(
        [sys.executable, "-c", "import sys, lit.main; sys.argv[0] = 'lit'; lit.main.main()",
         "-sv", f"-j{os.cpu_count() or 1}", str(LIT_DIR)],
        capture_output=True, text=True, timeout=600)
    output = result.stdout + result.stderr
    discovered = re.search(r"Total Discovered Tests: (\d+)", output)
    # An empty suite must fail, not pass vacuously (a broken lit.cfg.py finds nothing).
    assert discovered and int(discovered.group(1)) > 0, output
    assert result.returncode == 0, output
