"""Ops of other dialects that the TTGIR reader carries as text (`ttgir.foreign`) become real
upstream ops before anything rewrites types (ll-linearize-encodings) or lowers (ll-to-simt);
one MLIR 22 cannot parse is a one-line error at the op, and nothing is written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CORPUS = Path(__file__).parent / "kernel_corpus" / "ttgir"
SOFTMAX = CORPUS / "softmax.sm80.w4.ttgir"


def _opt(path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "linear_layout.tools.opt", str(path), *args], capture_output=True, text=True
    )


def test_linearized_ttgir_has_the_math_op_in_linear_types(tmp_path):
    assert "math.exp" in SOFTMAX.read_text()
    out = tmp_path / "out.ttgir"
    result = _opt(SOFTMAX, "-p", "builtin.module(ll-linearize-encodings)", "-o", str(out))
    assert result.returncode == 0, result.stderr
    written = out.read_text()
    exp_lines = [line for line in written.splitlines() if "math.exp" in line]
    assert exp_lines and "foreign" not in written
    # the op's own type is the rewritten one: no blocked encoding is left anywhere
    assert all("#blocked" not in line and "ttg.blocked" not in line for line in exp_lines)
    assert "ttg.blocked" not in written
    # and the written file reads back
    again = _opt(out, "-o", str(tmp_path / "again.ttgir"))
    assert again.returncode == 0, again.stderr


def test_a_foreign_op_mlir_cannot_parse_is_one_line_at_the_op(tmp_path):
    lines = SOFTMAX.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if "math.exp" in line)
    lines.insert(at, "    rocdl.sched.barrier none")  # Triton's LLVM's syntax; MLIR 22 rejects it
    path = tmp_path / "k.ttgir"
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.mlir"
    result = _opt(path, "-p", "builtin.module(ll-lower)", "-o", str(out))
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, result.stderr
    assert f":{at + 1}:1: error: " in errors[0] and "rocdl.sched.barrier" in errors[0], errors[0]
    assert "invalid kind of attribute" in errors[0] and '"-":2' not in errors[0]
    assert "Traceback" not in result.stderr
    assert not out.exists()
