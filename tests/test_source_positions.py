"""Errors at an op name its `file:line:col` whatever wraps the file location: TTGIR names its
values by their locations (`loc("x"("k.py":3:7))`), Triton's inlined callees are call sites whose
callee is `loc(unknown)`, and rewrites fuse locations. `ir.upstream.source_position` (and the
driver's diagnostics, through the same `file_location`) looks through all three."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mlir import ir

from linear_layout.ir.upstream import file_location, source_position
from linear_layout.passes.amdgcn import AmdgcnError, emit_rocdl_llvm
from linear_layout.tools.kernels import lower_ttgir

ROOT = Path(__file__).parent
VADD = ROOT / "kernel_corpus" / "ttgir" / "vadd.sm80.w4.ttgir"
MATMUL = ROOT / "ttgir_corpus" / "matmul_f16.sm80.ttgir"


def test_source_position_looks_through_names_call_sites_and_fused_locations():
    with ir.Context():
        here, caller, unknown = ir.Location.file("k.py", 3, 7), ir.Location.file("a.py", 9, 2), ir.Location.unknown()
        cases = {
            ir.Location.name("x", here): "k.py:3:7",
            ir.Location.callsite(here, [caller]): "k.py:3:7",  # the callee first, as MLIR reports it
            ir.Location.name("x", ir.Location.callsite(unknown, [caller])): "a.py:9:2",  # Triton's inlined op
            ir.Location.fused([ir.Location.name("y", unknown), ir.Location.name("z", here), caller]): "k.py:3:7",
        }
        for location, expected in cases.items():
            assert source_position(location) == expected, str(location)
        assert source_position(unknown) == "loc(unknown)" and file_location(ir.Location.name("x", unknown)) is None


def _with_loc(text: str, alias: str, definition: str) -> str:
    """`text` with the location alias `alias` redefined (every op using it gets the new location)."""
    old = next(line for line in text.splitlines() if line.startswith(f"{alias} = loc("))
    return text.replace(old, f"{alias} = {definition}")


def test_an_error_after_ll_lower_names_the_position_under_a_name_and_a_call_site():
    """The masked loads of vadd (`%x = tt.load`, location `#loc20 = loc("x"(#loc6))`) placed in an
    inlined callee, as Triton writes it: ll-lower's PTX inline asm, refused for an AMD chip, is
    reported at the caller's `corpus.py:30:17`, not as the location's text."""
    text = _with_loc(VADD.read_text(), "#loc20", 'loc("x"(callsite(#loc1 at #loc5)))')
    with pytest.raises(AmdgcnError, match=r"^corpus\.py:30:17: 'llvm\.inline_asm' is NVIDIA-only"):
        emit_rocdl_llvm(lower_ttgir(text), "gfx942")


def test_an_ll_verify_error_names_the_position_under_a_name_and_a_call_site(tmp_path):
    """A wrong `tt.expand_dims` axis (Triton's inferExpandDimsOpEncoding) at an op whose name
    location wraps an inlined call site: the driver's one-line error starts with `generate.py:42:22`."""
    text = _with_loc(MATMUL.read_text(), "#loc48", 'loc("a_ptrs"(callsite(#loc1 at #loc7)))')
    expand = next(line for line in text.splitlines() if "tt.expand_dims" in line and "loc(#loc48)" in line)
    path = tmp_path / "wrong.ttgir"
    path.write_text(text.replace(expand, expand.replace("{axis = 1 : i32}", "{axis = 0 : i32}")))
    result = subprocess.run(
        [sys.executable, "-m", "linear_layout.tools.opt", str(path), "-p", "builtin.module(ll-verify)"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("generate.py:42:22: error: 'tt.expand_dims' op source encoding"), result.stderr
