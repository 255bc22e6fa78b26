"""SIMT patterns of Triton's shape ops as layout operations: `tt.join`, `tt.split`, `tt.reshape`
and `tt.cat`. Each is a register renaming (`triton_kernel.register_renaming`): the threads hold
the same elements before and after, so the op is no instruction when the registers line up, else
one `vector.shuffle` of the operands' per-thread vectors. Where the layouts would move data
between threads the op is a `LoweringError` (Triton's layout inference never makes one: it
chooses the result layout so that these ops stay in registers).

- `tt.join a, b` (shape S -> S x 2): result element (i, k) is element i of operand k;
- `tt.split x` (S x 2 -> S, S): result k's element i is x's (i, k);
- `tt.reshape x` (row-major, as `numpy.reshape`): result element i is the source element with
  the same row-major rank. With `allow_reorder` (the order of the elements is unspecified) the
  row-major renaming where the layouts allow it, else Triton's: result register r is source
  register r;
- `tt.cat a, b` (Triton prints it only for `can_reorder`: the order is unspecified): Triton's
  register concatenation, a's registers then b's.

    >>> # %j = tt.join %x, %y : tensor<256xi32, #blocked2> -> tensor<256x2xi32, #blocked>
    >>> # (sizePerThread [1] -> [1, 2]): one vector.shuffle %x', %y' [0, 1, 2, 3] -> [0, 2, 1, 3]
"""

from __future__ import annotations

import math
from collections.abc import Callable

from mlir import ir

from .common import cast_to
from .control_flow import lowered_type
from .kernel import Launch, LoweringError, hardware_layout
from .simt_pattern import SimtPattern
from .triton_kernel import register_renaming, shuffled

__all__ = ["CAT", "JOIN", "RESHAPE", "SPLIT"]

Index = tuple[int, ...]
Projection = Callable[[Index], tuple[int, Index]]


def _on_tensors(check: Callable) -> Callable:
    """`check`, after a LoweringError for an operand or result that is not a ranked tensor
    (Triton's shape ops take and give tensors; an edited file may say otherwise)."""

    def checked(op: ir.OpView, launch: Launch):
        values = [("operand", i, v) for i, v in enumerate(op.operation.operands)]
        values += [("result", i, v) for i, v in enumerate(op.operation.results)]
        for kind, index, value in values:
            if not isinstance(value.type, ir.RankedTensorType):
                raise LoweringError(f"'{op.operation.name}' {kind} #{index} must be a ranked tensor, got {value.type}")
        return check(op, launch)

    return checked


def _layout(value: ir.Value, launch: Launch):
    return hardware_layout(value.type, launch)


def _lowered(value: ir.Value, launch: Launch) -> ir.Value:
    return cast_to(value, lowered_type(value.type, launch))


def _renaming(op: ir.OpView, launch: Launch, result: ir.Value, project: Projection) -> list[int]:
    sources = [_layout(v, launch) for v in op.operation.operands]
    return register_renaming(sources, _layout(result, launch), project)


# ---------------------------------------------------------------------------- join, split


def _unjoin(index: Index) -> tuple[int, Index]:
    return index[-1], index[:-1]


def _check_join(op: ir.OpView, launch: Launch) -> list[int]:
    return _renaming(op, launch, op.operation.results[0], _unjoin)


def _half(k: int) -> Projection:
    """`tt.split`'s result k: element i is the operand's (i, k)."""

    def project(index: Index) -> tuple[int, Index]:
        return 0, (*index, k)

    return project


def _check_split(op: ir.OpView, launch: Launch) -> list[list[int]]:
    return [_renaming(op, launch, result, _half(k)) for k, result in enumerate(op.operation.results)]


def _emit_split(op: ir.OpView, launch: Launch, renamings: list[list[int]]) -> list[ir.Value]:
    source = _lowered(op.operation.operands[0], launch)
    return [
        cast_to(shuffled([source], renaming), result.type) for renaming, result in zip(renamings, op.operation.results)
    ]


# ---------------------------------------------------------------------------- reshape


def _row_major(source_shape: list[int], result_shape: list[int]) -> Projection:
    """Result index -> the source index of the same row-major rank."""

    def project(index: Index) -> tuple[int, Index]:
        rank = 0
        for i, size in zip(index, result_shape):
            rank = rank * size + i
        source = []
        for size in reversed(source_shape):
            source.append(rank % size)
            rank //= size
        return 0, tuple(reversed(source))

    return project


def _allows_reorder(op: ir.OpView) -> bool:
    return "allow_reorder" in op.operation.attributes or "efficient_layout" in op.operation.attributes


def _check_reshape(op: ir.OpView, launch: Launch) -> list[int]:
    source, result = op.operation.operands[0], op.operation.results[0]
    project = _row_major(list(source.type.shape), list(result.type.shape))
    try:
        return _renaming(op, launch, result, project)
    except LoweringError:
        if not _allows_reorder(op):
            raise
    return _in_register_order(op, launch)


def _in_register_order(op: ir.OpView, launch: Launch) -> list[int]:
    """Triton's reordering reshape and concatenation: the operands' registers, in order; the
    registers of the result must be exactly as many."""
    held = sum(_layout(v, launch).get_in_dim_size("register") for v in op.operation.operands)
    wanted = _layout(op.operation.results[0], launch).get_in_dim_size("register")
    if held != wanted:
        raise LoweringError(f"'{op.operation.name}' would move elements between threads ({held} registers -> {wanted})")
    return list(range(wanted))


def _emit_renamed(op: ir.OpView, launch: Launch, renaming: list[int]) -> list[ir.Value]:
    operands = [_lowered(v, launch) for v in op.operation.operands]
    return [cast_to(shuffled(operands, renaming), op.operation.results[0].type)]


# ---------------------------------------------------------------------------- cat


def _check_cat(op: ir.OpView, launch: Launch) -> list[int]:
    shapes = [list(v.type.shape) for v in op.operation.operands]
    if math.prod(shapes[0]) != math.prod(shapes[1]):
        raise LoweringError("'tt.cat' of operands of different sizes")
    return _in_register_order(op, launch)


JOIN = SimtPattern(("tt.join",), _on_tensors(_check_join), _emit_renamed)
SPLIT = SimtPattern(("tt.split",), _on_tensors(_check_split), _emit_split)
RESHAPE = SimtPattern(("tt.reshape",), _on_tensors(_check_reshape), _emit_renamed)
CAT = SimtPattern(("tt.cat",), _on_tensors(_check_cat), _emit_renamed)
