"""Builders for the `ttg` operations, in the style of `mlir.dialects.*`: snake_case, the result
type first, keyword-only `loc` and `ip`. Single-result builders return the `ir.Value`."""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir

__all__ = ["convert_layout", "local_alloc", "local_load", "local_store", "memdesc_type"]


def memdesc_type(shape: Sequence[int], element_type: ir.Type, encoding: ir.Attribute, *,
                 mutable: bool = True, context: ir.Context | None = None) -> ir.Type:
    """`!ttg.memdesc<shape, element_type, encoding, #ttg.shared_memory, "mutable"|"immutable">`."""
    mutability = "mutable" if mutable else "immutable"
    text = (f"!ttg.memdesc<[{', '.join(map(str, shape))}], {element_type}, {encoding}, "
            f'#ttg.shared_memory, "{mutability}">')
    return ir.Type.parse(text, context or element_type.context)


def _create(name, results, operands, loc, ip) -> ir.Operation:
    return ir.Operation.create(name, results=results, operands=operands, loc=loc, ip=ip)


def convert_layout(result: ir.Type, src: ir.Value, *, loc=None, ip=None) -> ir.Value:
    return _create("ttg.convert_layout", [result], [src], loc, ip).result


def local_alloc(result: ir.Type, src: ir.Value | None = None, *, loc=None, ip=None) -> ir.Value:
    return _create("ttg.local_alloc", [result], [] if src is None else [src], loc, ip).result


def local_load(result: ir.Type, src: ir.Value, *, loc=None, ip=None) -> ir.Value:
    return _create("ttg.local_load", [result], [src], loc, ip).result


def local_store(src: ir.Value, dst: ir.Value, *, loc=None, ip=None) -> ir.Operation:
    return _create("ttg.local_store", [], [src, dst], loc, ip)
