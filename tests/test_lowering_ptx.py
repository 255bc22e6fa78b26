"""Every lowered kernel of the lit suite compiles to PTX with the stock upstream pipeline.

A lit file under tests/lit/lowering/ opts in with `// PTX-PIPELINE: <pipeline>` (its chunks are
lowered with that pipeline; chunks that fail to lower are skipped, they are error tests) or
`// PTX-FILE: <path>` (lower that file with ll-lower). The lowered module then goes through
`linear_layout.passes.emit_ptx(module, "sm_90", "+ptx80")` (the stock
`gpu-lower-to-nvvm-pipeline`), which needs no GPU, and must produce PTX.
(The FileCheck lines of the same files run in tests/test_lit.py, not here.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mlir import ir

from linear_layout.ir import load_dialects
from linear_layout.passes import build_pass_manager, emit_ptx

ROOT = Path(__file__).resolve().parents[1]
LIT_DIR = ROOT / "tests" / "lit" / "lowering"


def ptx_of(lowered: str, chip: str = "sm_90", short_pointers: bool = False) -> str:
    """The PTX of a lowered module (`linear_layout.passes.emit_ptx`, PTX ISA 8.0)."""
    with ir.Context() as context:
        load_dialects(context)
        return emit_ptx(ir.Module.parse(lowered), chip, "+ptx80", short_pointers=short_pointers)


def lowered_kernels():
    for path in sorted(LIT_DIR.glob("*.mlir")):
        text = path.read_text()
        pipeline = re.search(r"// PTX-PIPELINE: (.*)", text)
        source = re.search(r"// PTX-FILE: (.*)", text)
        if source:
            yield f"{path.name}:{source.group(1)}", (path.parent / source.group(1).strip()).read_text(), "ll-lower"
        elif pipeline:
            for k, chunk in enumerate(re.split(r"^// -----$", text, flags=re.M)):
                yield f"{path.name}#{k}", chunk, pipeline.group(1).strip()


CASES = list(lowered_kernels())


def lowered_text(text: str, pipeline: str) -> str:
    """`text` run through `pipeline`, printed."""
    context = ir.Context()
    load_dialects(context)
    with context:
        module = ir.Module.parse(text)
        build_pass_manager(pipeline, context).run(module.operation)
        return str(module)


#: A shared-memory access through a 64-bit address register (`st.shared.b32 [%rd5+4], %r1;`).
SHARED_ACCESS_64 = re.compile(r"\b(?:ld|st)\.shared(?:\.\w+)+\s+(?:\{[^}]*\},\s*)?\[%rd\d+")


@pytest.mark.parametrize("name, text, pipeline", CASES, ids=[c[0] for c in CASES])
def test_lowered_kernel_compiles_to_ptx(name, text, pipeline):
    lowered = lowered_text(text, pipeline)
    assert "gpu.func" in lowered
    ptx = ptx_of(lowered)
    assert ".target sm_90" in ptx and ".entry" in ptx
    if "alignment = 16" in lowered:
        assert any(v in ptx for v in ("ld.global.v4", "st.global.v4", "ld.shared.v4", "st.shared.v4"))
    if "workgroup(" in lowered:
        assert ".shared" in ptx and "st.shared" in ptx and "ld.shared" in ptx
        if "vector<4xf32>" in lowered and "#gpu.address_space<workgroup>>, vector<4xf32>" in lowered:
            assert "st.shared.v4" in ptx or "ld.shared.v4" in ptx
    if "gpu.barrier" in lowered:
        assert "bar.sync" in ptx
    if "gpu.shuffle" in lowered:
        assert "shfl.sync" in ptx


def test_short_pointers_give_32_bit_shared_addresses_until_switched_off():
    """`emit_ptx(..., short_pointers=True)` sets LLVM's `nvptx-short-ptr` (the flag Triton's backend
    sets): every shared access goes through a 32-bit `%r` address, where the default's go through
    64-bit `%rd` ones (a `mul.wide.u32` and an `add.s64` each); the option is process state, and
    the next default compile sets it back."""
    name, text, pipeline = next(case for case in CASES if case[0].startswith("ll-to-simt-shared"))
    lowered = lowered_text(text, pipeline)
    assert "workgroup(" in lowered, name
    short, default = ptx_of(lowered, short_pointers=True), ptx_of(lowered)
    assert re.search(r"\b(?:ld|st)\.shared", short) and not SHARED_ACCESS_64.findall(short)
    assert SHARED_ACCESS_64.findall(default)  # 64-bit again: the option was set back
    assert not SHARED_ACCESS_64.findall(ptx_of(lowered, short_pointers=True))  # and on again
