"""The planner's index-op model against the emitter: the `xor`s of the instruction offsets that
`planning/shared.offset_xors` predicts are the `xori`s `patterns/shared_memory.shared_index`
emits into the workgroup addresses of every shared-memory conversion of
`benchmarks/bench_codegen.py` (after `cse`, as LLVM's CSE merges equal ones)."""

import sys
from pathlib import Path

import pytest
from mlir import ir

from linear_layout.ir import load_dialects
from linear_layout.ir.walk import walk
from linear_layout.passes import build_pass_manager
from linear_layout.planning import plan_conversion
from linear_layout.planning.shared import offset_xors
from lowering_cases import kernel_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_codegen import BITS, suite

_MEMORY_OPS = {"vector.load": 0, "vector.store": 1, "memref.load": 0, "memref.store": 1}


def _workgroup_index(op: ir.Operation) -> ir.Value | None:
    """The index of a 1-D workgroup access (None: not one)."""
    if op.name not in _MEMORY_OPS:
        return None
    memref_value = op.operands[_MEMORY_OPS[op.name]]
    memref_type = ir.MemRefType(memref_value.type)
    if "workgroup" not in str(memref_type.memory_space) or memref_type.rank != 1:
        return None
    return op.operands[_MEMORY_OPS[op.name] + 1]


def _defining(value: ir.Value, name: str) -> ir.Operation | None:
    owner = value.owner
    return owner.operation if isinstance(owner, ir.OpView) and owner.operation.name == name else None


def _offset_xor(index: ir.Value) -> ir.Operation | None:
    """The `xori base, constant` under a shared index (`index_castui(xori) [+ immediate]`)."""
    added = _defining(index, "arith.addi")
    if added is not None:
        index = added.operands[0]
    cast = _defining(index, "arith.index_castui")
    if cast is None:
        return None
    xor = _defining(cast.operands[0], "arith.xori")
    return xor if xor is not None and _defining(xor.operands[1], "arith.constant") is not None else None


def emitted_offset_xors(text: str) -> int:
    """The distinct offset `xori`s of the workgroup accesses of `text` lowered by `ll-lower, cse`."""
    context = ir.Context()
    load_dialects(context)
    found: set[str] = set()
    with context:
        module = ir.Module.parse(text)
        build_pass_manager("builtin.module(ll-lower, cse)", context).run(module.operation)

        def visit(op: ir.Operation) -> ir.WalkResult:
            index = _workgroup_index(op)
            xor = _offset_xor(index) if index is not None else None
            if xor is not None:
                found.add(xor.get_asm())
            return ir.WalkResult.ADVANCE

        walk(module.operation, visit)
    return len(found)


def _shared_cases():
    for name, a, b, shape, dtype, warps in suite():
        src, dst = a.to_linear_layout(list(shape)), b.to_linear_layout(list(shape))
        plan = plan_conversion(src, dst, bitwidth=BITS[dtype])
        if plan.strategy == "shared":
            yield pytest.param(src, dst, dtype, warps, plan.shared, id=name)


@pytest.mark.parametrize(("src", "dst", "dtype", "warps", "shared"), list(_shared_cases()))
def test_predicted_offset_xors_are_the_emitted_ones(src, dst, dtype, warps, shared):
    predicted = offset_xors(shared.store) + offset_xors(shared.load)
    assert emitted_offset_xors(kernel_text(src, dst, dtype, warps)) == predicted
    # The model the emitter replaced counted one xor per non-additive instruction: never fewer.
    assert predicted <= sum(1 for side in (shared.store, shared.load) for ins in side.instructions if not ins.additive)
