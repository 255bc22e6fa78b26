"""The `vector` ops: per-thread vectors (a value is `(threads, *shape)`).

Ops: load store extract insert (static or dynamic positions) broadcast shuffle interleave
deinterleave from_elements bitcast (MLIR 22 has no ``vector.splat``: use broadcast).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..elements import result_elem, vector_shape
from ..errors import UndefinedBehaviorError
from ..machine import bitcast, handles, register

_DYNAMIC_POSITION = -(2**63)  # ShapedType::kDynamic in vector.extract/insert static positions
POISON_INDEX = -1  # vector.shuffle mask entry meaning "poison"


def _position(ex, op, dynamic_operands: Sequence) -> list:
    """Static ints or per-thread index arrays of a vector.extract/insert position."""
    dynamic = iter(dynamic_operands)
    out = []
    for p in op.attributes["static_position"]:
        if p == _DYNAMIC_POSITION:
            out.append(ex.get(next(dynamic)).astype(np.int64))
        elif p == POISON_INDEX:
            raise UndefinedBehaviorError("poison (-1) vector position")
        else:
            out.append(p)
    return out


def _checked_index(ex, position, value_shape) -> tuple:
    """Advanced-index tuple selecting ``position`` in each thread's vector."""
    index = [np.arange(ex.num_threads)]
    for dim, p in enumerate(position):
        size = value_shape[1 + dim]
        if isinstance(p, np.ndarray):
            bad = ex.active & ((p < 0) | (p >= size))
            if bad.any():
                t = int(np.argmax(bad))
                raise UndefinedBehaviorError(
                    f"dynamic vector position {int(p[t])} out of range [0, {size}) in thread {t}"
                )
            index.append(np.where(ex.active, p, 0))
        else:
            index.append(np.full(ex.num_threads, p))
    return tuple(index)


@handles("vector.extract")
def _vector_extract(ex, op):
    vector = ex.get(op.operands[0])
    position = _position(ex, op, op.operands[1:])
    return [vector[_checked_index(ex, position, vector.shape)]]


@handles("vector.insert")
def _vector_insert(ex, op):
    value, dest = ex.get(op.operands[0]), ex.get(op.operands[1])
    position = _position(ex, op, op.operands[2:])
    out = np.array(dest)  # copy: values are never mutated in place
    out[_checked_index(ex, position, dest.shape)] = value
    return [out]


@handles("vector.broadcast")
def _vector_broadcast(ex, op):
    (source,) = ex.operands(op)
    target = vector_shape(op.results[0].type)
    padded = source.reshape((ex.num_threads,) + (1,) * (len(target) + 1 - source.ndim) + source.shape[1:])
    return [np.broadcast_to(padded, (ex.num_threads,) + target)]


@handles("vector.shuffle")
def _vector_shuffle(ex, op):
    a, b = ex.operands(op)
    a = a.reshape(ex.num_threads, -1, *a.shape[2:]) if a.ndim == 1 else a
    b = b.reshape(ex.num_threads, -1, *b.shape[2:]) if b.ndim == 1 else b
    both = np.concatenate([a, b], axis=1)
    mask = np.array(list(op.attributes["mask"]), dtype=np.int64)
    out = both[:, np.where(mask == POISON_INDEX, 0, mask)]
    poison = (mask == POISON_INDEX).reshape((1, -1) + (1,) * (out.ndim - 2))
    return [np.where(poison, result_elem(op).garbage(out.shape), out)]


@handles("vector.interleave")
def _vector_interleave(ex, op):
    """Along the innermost dimension: a[0], b[0], a[1], b[1], ..."""
    a, b = ex.operands(op)
    both = np.stack([a, b], axis=-1)
    return [both.reshape(both.shape[:-2] + (-1,))]


@handles("vector.deinterleave")
def _vector_deinterleave(ex, op):
    """Along the innermost dimension: the even elements, and the odd ones."""
    (x,) = ex.operands(op)
    return [x[..., 0::2], x[..., 1::2]]


@handles("vector.from_elements")
def _vector_from_elements(ex, op):
    elements = ex.operands(op)
    shape = vector_shape(op.results[0].type)
    return [np.stack(elements, axis=1).reshape((ex.num_threads,) + shape)]


@handles("vector.load")
def _vector_load(ex, op):
    buf, *indices = ex.operands(op)
    return [ex.access(op, "load", buf, indices, vector_shape(op.results[0].type))]


@handles("vector.store")
def _vector_store(ex, op):
    value, buf, *indices = ex.operands(op)
    ex.access(op, "store", buf, indices, vector_shape(op.operands[0].type), value)
    return []


register("vector.bitcast", bitcast)
