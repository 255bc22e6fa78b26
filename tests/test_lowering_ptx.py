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


def ptx_of(lowered: str, chip: str = "sm_90") -> str:
    """The PTX of a lowered module (`linear_layout.passes.emit_ptx`, PTX ISA 8.0)."""
    with ir.Context() as context:
        load_dialects(context)
        return emit_ptx(ir.Module.parse(lowered), chip, "+ptx80")


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
#: A shared-memory access through a 64-bit address register (`st.shared.b32 [%rd5+4], %r1;`).
SHARED_ACCESS_64 = re.compile(r"\b(?:ld|st)\.shared(?:\.\w+)+\s+(?:\{[^}]*\},\s*)?\[%rd\d+")


@pytest.mark.parametrize("name, text, pipeline", CASES, ids=[c[0] for c in CASES])
def test_lowered_kernel_compiles_to_ptx(name, text, pipeline):
    context = ir.Context()
    load_dialects(context)
    with context:
        module = ir.Module.parse(text)
        build_pass_manager(pipeline, context).run(module.operation)
        lowered = str(module)
    assert "gpu.func" in lowered
    ptx = ptx_of(lowered)
    assert ".target sm_90" in ptx and ".entry" in ptx
    if "alignment = 16" in lowered:
        assert any(v in ptx for v in ("ld.global.v4", "st.global.v4", "ld.shared.v4", "st.shared.v4"))
    if "workgroup(" in lowered:
        assert ".shared" in ptx and "st.shared" in ptx and "ld.shared" in ptx
        # 32-bit shared addresses, as Triton's (`nvptx-short-ptr`): never a 64-bit `%rd` register
        assert not SHARED_ACCESS_64.findall(ptx)
        if "vector<4xf32>" in lowered and "#gpu.address_space<workgroup>>, vector<4xf32>" in lowered:
            assert "st.shared.v4" in ptx or "ld.shared.v4" in ptx
    if "gpu.barrier" in lowered:
        assert "bar.sync" in ptx
    if "gpu.shuffle" in lowered:
        assert "shfl.sync" in ptx
