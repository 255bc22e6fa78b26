"""The `llvm` ops: pointers into workgroup memory.

Ops: inttoptr (to ``!llvm.ptr<1>`` and ``!llvm.ptr<3>``) ptrtoint getelementptr (one index into a scalar type)
extractvalue (one position) bitcast, inline_asm (exactly the PTX strings of `INLINE_ASM`).
"""

from __future__ import annotations

import mlir.ir as ir
import numpy as np

from ...ir.upstream import llvm_pointer_space
from ..elements import elem_of, result_elem
from ..errors import UnsupportedOp
from ..machine import bitcast, float_op, handles, register

_GEP_DYNAMIC_INDEX = -(2**31)  # llvm.getelementptr rawConstantIndices entry meaning "dynamic"


def _pointer_space(t: ir.Type) -> int:
    space = llvm_pointer_space(t)
    if space is None:
        raise UnsupportedOp(f"type {t} is not an LLVM pointer")
    return space


@handles("llvm.inttoptr")
def _inttoptr(ex, op):
    (x,) = ex.operands(op)
    if _pointer_space(op.results[0].type) not in (1, 3):
        raise UnsupportedOp(f"llvm.inttoptr to {op.results[0].type}: only global (1) and shared (3) address spaces")
    return [elem_of(op.operands[0].type).unsigned(x)]


@handles("llvm.ptrtoint")
def _ptrtoint(ex, op):
    (x,) = ex.operands(op)
    return [result_elem(op).wrap(x)]


@handles("llvm.getelementptr")
def _getelementptr(ex, op):
    """``base + index * sizeof(elem_type)`` for one (constant or dynamic) index into a scalar type."""
    base, *dynamic = ex.operands(op)
    raw = list(op.attributes["rawConstantIndices"])
    element = op.attributes["elem_type"].value
    if len(raw) != 1 or not isinstance(element, (ir.IntegerType, ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)):
        raise UnsupportedOp("llvm.getelementptr: only one index into a scalar integer or float type is supported")
    if raw[0] == _GEP_DYNAMIC_INDEX:
        index = elem_of(op.operands[1].type).signed(dynamic[0])
    else:
        index = np.full(ex.num_threads, raw[0], dtype=np.int64)
    size = elem_of(element).mem_bytes
    return [(base.astype(np.int64) + index * size).astype(np.uint64)]


@handles("llvm.extractvalue")
def _extractvalue(ex, op):
    (aggregate,) = ex.operands(op)
    position = list(op.attributes["position"])
    if len(position) != 1 or not isinstance(aggregate, tuple):
        raise UnsupportedOp("llvm.extractvalue: only one position into a struct of scalars is supported")
    return [aggregate[position[0]]]


register("llvm.bitcast", bitcast)


#: The `llvm.inline_asm` strings the interpreter runs (the lowering emits only these), each with
#: its constraints and what it computes on its operands.
INLINE_ASM = {
    ("sqrt.rn.f32 $0, $1;", "=f,f"): np.sqrt,  # IEEE-rounded, as numpy's float32 sqrt
}


@handles("llvm.inline_asm")
def _inline_asm(ex, op):
    asm = ir.StringAttr(op.attributes["asm_string"]).value
    constraints = ir.StringAttr(op.attributes["constraints"]).value
    compute = INLINE_ASM.get((asm, constraints))
    if compute is None:
        raise UnsupportedOp(f"llvm.inline_asm {asm!r} ({constraints!r}) is not one the interpreter runs")
    return float_op(compute)(ex, op)
