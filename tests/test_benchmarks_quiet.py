"""The benchmarks end as quietly as the tests do: no ``nanobind: leaked ...`` report from Triton's
bindings at interpreter exit (benchmarks/quiet.py), and the benchmark's own exit status."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.parametrize("script", sorted(p.name for p in BENCHMARKS.glob("*.py") if p.name != "quiet.py"))
def test_every_benchmark_ends_through_run_quietly(script):
    text = (BENCHMARKS / script).read_text()
    assert text.rstrip().endswith('if __name__ == "__main__":\n    from quiet import run_quietly\n\n    run_quietly(main)')


@pytest.mark.parametrize("argv", [["bench_encodings.py", "--repeat", "25"], ["bench_ir.py", "--sizes", "100"]])
def test_the_triton_benchmarks_print_no_leak_report(argv):
    pytest.importorskip("triton")
    result = subprocess.run([sys.executable, str(BENCHMARKS / argv[0]), *argv[1:]], capture_output=True, text=True,
                            timeout=600, cwd=BENCHMARKS.parent)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [line for line in result.stdout.splitlines() if any(ch.isdigit() for ch in line)]
    assert len(rows) >= 2, result.stdout  # the table was printed: at least two rows of figures
    assert "leaked" not in result.stdout + result.stderr
    assert result.stderr.strip() == "", result.stderr[-2000:]


def test_run_quietly_keeps_the_exit_status(tmp_path):
    script = tmp_path / "bench_x.py"
    script.write_text(f"import sys\nsys.path.insert(0, {str(BENCHMARKS)!r})\nimport triton\n"
                      "from quiet import run_quietly\nprint('table')\nrun_quietly(lambda: 3)\n")
    pytest.importorskip("triton")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout, "leaked" in result.stderr) == (3, "table\n", False)
