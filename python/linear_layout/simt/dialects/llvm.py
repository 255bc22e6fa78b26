"""The `llvm` ops: pointers into workgroup memory.

Ops: inttoptr (to ``!llvm.ptr<1>`` and ``!llvm.ptr<3>``) ptrtoint getelementptr (one index into a scalar type)
extractvalue (one position) bitcast, cmpxchg (global memory, one thread after another), inline_asm (exactly the PTX strings of `INLINE_ASM`, and the
predicated global loads, stores and atomics and the `mad.wide.s32` address steps of `ir/ptx_asm.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mlir.ir as ir
import numpy as np

from ...ir.ptx_asm import MAD_WIDES, PredicatedAccess, PredicatedAtomic, access_of, atomic_of
from ...ir.upstream import llvm_pointer_space
from ..elements import elem_of, result_elem
from ..errors import MemoryAccessError, UnsupportedOp
from ..machine import bitcast, float_op, handles, register
from ..memory import elements_at

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


@handles("llvm.cmpxchg")
def _cmpxchg(ex, op):
    """One compare-and-swap per active thread, in thread order, on global memory: the element
    becomes `val` where its bits equal `cmp`'s; each thread gets (old value, swapped)."""
    address, compare, value = ex.operands(op)
    elem = elem_of(op.operands[1].type)
    old = np.zeros(ex.num_threads, dtype=np.asarray(elem.wrap(compare)).dtype)
    swapped = np.zeros(ex.num_threads, dtype=bool)
    for thread in np.flatnonzero(ex.active):
        at = np.asarray(address).astype(np.int64)[thread : thread + 1]
        buf, place = elements_at(ex, op, ex.global_buffers, at, elem.mem_bytes, "global")
        current = buf.data[int(place[0])]
        old[thread] = current
        swapped[thread] = (
            elem.unsigned(np.asarray([current]))[0] == elem.unsigned(np.asarray(compare)[thread : thread + 1])[0]
        )
        if swapped[thread]:
            buf.data[int(place[0])] = elem.wrap(np.asarray(value)[thread : thread + 1])[0]
    return [(elem.wrap(old), swapped)]


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
def _cvt_rz_f16(x: np.ndarray) -> np.ndarray:
    """The f16 bits of f32 `x` rounded toward zero: numpy's nearest, one step toward zero (its
    bits less one) where that is larger in magnitude (infinity from overflow becomes 65504)."""
    x = np.asarray(x, dtype=np.float32)
    with np.errstate(over="ignore"):
        nearest = x.astype(np.float16)
    bits = nearest.view(np.uint16).astype(np.int64)
    away = np.abs(nearest.astype(np.float32)) > np.abs(x)
    return np.where(away, bits - 1, bits)


INLINE_ASM = {
    ("sqrt.rn.f32 $0, $1;", "=f,f"): np.sqrt,  # IEEE-rounded, as numpy's float32 sqrt
    ("cvt.rz.f16.f32 $0, $1;", "=h,f"): _cvt_rz_f16,  # the 16 bits of the half
    # Triton's exp: hardware within 2 ulp of 2 ** x (PTX ISA), here its correctly rounded value
    ("ex2.approx.f32 $0, $1;", "=f,f"): np.exp2,
}


@handles("llvm.inline_asm")
def _inline_asm(ex, op):
    asm = ir.StringAttr(op.attributes["asm_string"]).value
    constraints = ir.StringAttr(op.attributes["constraints"]).value
    access = access_of(asm, constraints)
    if access is not None:
        return _predicated_access(ex, op, access)
    atomic = atomic_of(asm, constraints)
    if atomic is not None:
        return _predicated_atomic(ex, op, atomic)
    step = MAD_WIDES.get((asm, constraints))
    if step is not None:
        return _mad_wide(ex, op, step)
    compute = INLINE_ASM.get((asm, constraints))
    if compute is None:
        raise UnsupportedOp(f"llvm.inline_asm {asm!r} ({constraints!r}) is not one the interpreter runs")
    return float_op(compute)(ex, op)


#: What each `atom` operation writes, from the old element and the thread's value (Python
#: numbers, signed or unsigned by the type letter; floats as numpy scalars of their width).
_ATOMIC_UPDATES: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda old, value: old + value,
    "max": max,
    "min": min,
    "and": lambda old, value: old & value,
    "or": lambda old, value: old | value,
    "xor": lambda old, value: old ^ value,
    "exch": lambda old, value: value,
}


def _predicated_atomic(ex, op, atomic: PredicatedAtomic):
    """A predicated `atom.global`: the active threads whose predicate is set, one after another
    in thread order, each read the element at its address, write `operation(old, value)` and
    get `old`; the others get 0. `sem` and `scope` order this kernel's accesses no differently
    in the interpreter (one thread at a time, every access visible at once), so both are only
    checked to be PTX's."""
    ex.report.op_counts["llvm.inline_asm (atomic)"] += 1  # counted with the other atomics' ops
    address, value, *guard = ex.operands(op)  # the predicate, where the form has one
    elem = elem_of(op.operands[1].type)
    values = np.asarray(elem.wrap(value))
    old = np.zeros(ex.num_threads, dtype=values.dtype)
    on = ex.active & np.asarray(guard[0]).astype(bool) if atomic.predicated else ex.active
    as_number: Callable[[np.ndarray], np.ndarray] = {
        "s": elem.signed,
        "u": elem.unsigned,
        "b": elem.unsigned,
        "f": elem.wrap,
    }[atomic.kind]
    update = _ATOMIC_UPDATES[atomic.operation]
    for thread in np.flatnonzero(on):
        at = np.asarray(address).astype(np.int64)[thread : thread + 1]
        buf, place = elements_at(ex, op, ex.global_buffers, at, elem.mem_bytes, "global")
        current = buf.data[int(place[0]) : int(place[0]) + 1]
        old[thread] = current[0]
        new = update(as_number(current)[0], as_number(values[thread : thread + 1])[0])
        if atomic.kind != "f":  # an integer wraps around at its width
            new = np.asarray([int(new) % (1 << atomic.bits)], dtype=np.uint64)
        buf.data[int(place[0])] = elem.wrap(np.asarray(new))[0] if atomic.kind != "f" else new
    return [elem.wrap(old)]


def _mad_wide(ex, op, element_bytes: int):
    """`mad.wide.s32 $0, $1, element_bytes, $2`: the pointer $2 plus the sign-extended i32 $1
    times `element_bytes` (64-bit, wrapping), as `getelementptr` computes it."""
    index, pointer = ex.operands(op)
    steps = elem_of(op.operands[0].type).signed(index).astype(np.int64) * element_bytes
    return [(np.asarray(pointer).astype(np.int64) + steps).astype(np.uint64)]


def _predicated_access(ex, op, access: PredicatedAccess):
    """A predicated `ld.global`/`st.global` of `access.words` words: only the active threads
    whose predicate is set touch memory, through the global buffer holding their addresses,
    with the same bounds check and accounting as a `vector.load`/`vector.store` and a check
    that each address is aligned to the access width; a predicated-off load gives its `other`
    words (or 0).

    Requires: the addresses of the predicated-on threads lie in one global buffer, at a
    multiple of ``words * bits / 8`` bytes.
    Postcondition: a load returns its words (a tuple for a struct of several)."""
    values = ex.operands(op)
    words = access.words
    first = words if access.kind == "store" else 0  # a store's operands start with its words
    predicate, address = values[first], values[first + 1]
    on = ex.active & np.asarray(predicate).astype(bool)
    word_elem = elem_of(ir.IntegerType.get_signless(access.bits))
    nbytes = words * access.bits // 8
    offsets = np.zeros(ex.num_threads, dtype=np.int64)
    buf = None
    if on.any():
        addresses = np.asarray(address).astype(np.int64) + access.offset
        misaligned = on & (addresses % nbytes != 0)
        if misaligned.any():
            t = int(np.argmax(misaligned))
            raise MemoryAccessError(
                f"{op.name}: thread {t} accesses address {int(addresses[t])}, not a multiple of {nbytes}"
            )
        buf, offsets[on] = elements_at(ex, op, ex.global_buffers, addresses[on], nbytes, "global")
    if access.kind == "store":
        if buf is not None:
            stored = np.stack([word_elem.to_bits(v) for v in values[:words]], axis=1)
            _with_active(
                ex, on, lambda: ex.access(op, "store", buf, [offsets], _vshape(buf, nbytes), _from_words(buf, stored))
            )
        return []
    fill = values[2:] if access.with_other else [np.zeros(ex.num_threads, dtype=np.uint64)] * words
    result = np.stack([word_elem.to_bits(word_elem.wrap(v)) for v in fill], axis=1)
    if buf is not None:
        loaded = _with_active(ex, on, lambda: ex.access(op, "load", buf, [offsets], _vshape(buf, nbytes)))
        bits = np.ascontiguousarray(buf.elem.to_bits(loaded)).view(word_elem.bits_dtype).reshape(ex.num_threads, words)
        result = np.where(on[:, None], bits, result)
    out = [word_elem.from_bits(result[:, k]) for k in range(words)]
    return [out[0] if words == 1 else tuple(out)]


def _vshape(buf, nbytes: int) -> tuple[int, ...]:
    return (nbytes // buf.elem.mem_bytes,)


def _from_words(buf, words: np.ndarray) -> np.ndarray:
    """(threads, words) word bits as (threads, elements) values of the buffer's element type."""
    elements = np.ascontiguousarray(words).view(buf.elem.bits_dtype).reshape(words.shape[0], -1)
    return buf.elem.from_bits(elements)


def _with_active(ex, active: np.ndarray, run):
    """`run()` with only the threads `active` executing."""
    saved = ex.active
    ex.active = active
    try:
        return run()
    finally:
        ex.active = saved
