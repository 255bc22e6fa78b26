"""What the `ll` and `ttg` op classes share: the dialect registration and the per-op rule hook.

Each IRDL op gets an `OpView` subclass registered with `_cext.register_operation`, as the
generated `mlir.dialects.*` modules do; the bindings then hand out instances of it wherever the
op appears (`block.operations`, `op.opview`, rewrite-pattern callbacks). IRDL has no C++
verifier hooks for the rules it cannot express, so each class carries them as `verify_rules()`
(xDSL's `verify_()`), which `linear_layout.dialects.verifier` calls on every op it walks.
"""

from __future__ import annotations

from typing import Generic, TypeVar, overload

from mlir import ir
from mlir._mlir_libs import _mlir as _cext

from ..ir.walk import walk

__all__ = [
    "LayoutOp",
    "Slot",
    "operand_at",
    "operands_from",
    "ops_of",
    "register_dialect",
    "register_operation",
    "result_at",
    "results_from",
]

_T = TypeVar("_T")

register_operation = _cext.register_operation


def register_dialect(namespace: str) -> type:
    """The registered `ir.Dialect` class of the IRDL dialect `namespace`."""

    class _Dialect(ir.Dialect):
        DIALECT_NAMESPACE = namespace

    _Dialect.__name__ = _Dialect.__qualname__ = f"_{namespace.capitalize()}Dialect"
    return _cext.register_dialect(_Dialect)


def ops_of(root: ir.Operation, op_class: type[ir.OpView]) -> list:
    """Every op of class `op_class` in `root` (itself included), in pre-order (`Operation.walk`)."""
    name = op_class.OPERATION_NAME
    found = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == name:
            found.append(op.opview)
        return ir.WalkResult.ADVANCE

    walk(root, visit)
    return found


class Slot(Generic[_T]):
    """A typed, read-only accessor of an op class: ``memref = operand_at(0)`` makes ``op.memref``
    the op's first operand. The generated ``mlir.dialects`` modules write one property per operand
    and result; here the reading is written once (one call per access: the lowering reads these
    on its hot path)."""

    __slots__ = ("_operands", "_start", "_variadic")

    def __init__(self, operands: bool, start: int, variadic: bool) -> None:
        self._operands, self._start, self._variadic = operands, start, variadic

    @overload
    def __get__(self, op: None, owner: type | None = None) -> Slot[_T]: ...

    @overload
    def __get__(self, op: ir.OpView, owner: type | None = None) -> _T: ...

    def __get__(self, op, owner=None):
        if op is None:
            return self
        values = op.operands if self._operands else op.results
        return list(values)[self._start :] if self._variadic else values[self._start]


def operand_at(index: int) -> Slot[ir.Value]:
    """Operand ``index``."""
    return Slot(True, index, False)


def operands_from(start: int) -> Slot[list[ir.Value]]:
    """The operands from ``start`` on (a variadic operand group at the end)."""
    return Slot(True, start, True)


def result_at(index: int) -> Slot[ir.Value]:
    """Result ``index``."""
    return Slot(False, index, False)


def results_from(start: int) -> Slot[list[ir.Value]]:
    """The results from ``start`` on (a variadic result group)."""
    return Slot(False, start, True)


class LayoutOp(ir.OpView):
    """Base of the op classes: no regions; `verify_rules()` returns what breaks a rule IRDL
    cannot check, or None."""

    _ODS_REGIONS = (0, True)

    @classmethod
    def _create(cls, results, operands, attributes=None, *, loc=None, ip=None) -> ir.Operation:
        return ir.Operation.create(
            cls.OPERATION_NAME, results=list(results), operands=list(operands), attributes=attributes, loc=loc, ip=ip
        )

    def verify_rules(self) -> str | None:
        return None
