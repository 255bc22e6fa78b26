"""The printed forms of upstream attributes and types that the bindings expose only as text.

MLIR 22's Python bindings have no typed accessors for `#gpu<dim x>`, `#gpu<shuffle_mode xor>`,
`!llvm.ptr<3>`, the NVVM matrix attributes, memref memory spaces or the payload of a dense
attribute of a type numpy cannot view (bf16). Every reading of their printed text is here, so that
the rest of the package (the SIMT interpreter first) never parses printed IR.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from mlir import ir

__all__ = [
    "DenseText",
    "MatrixAttributes",
    "MmaAttributes",
    "dense_text",
    "file_location",
    "gpu_dimension",
    "gpu_shuffle_mode",
    "llvm_pointer_space",
    "location_text",
    "matrix_attributes",
    "mma_attributes",
    "memory_space_name",
    "source_position",
]

_WORKGROUP = ("#gpu.address_space<workgroup>", "3 : i64", "3 : i32", "3")
_GLOBAL = ("#gpu.address_space<global>", "1 : i64", "1 : i32", "1")


def memory_space_name(t: ir.MemRefType) -> str:
    """ "global" (no memory space, `#gpu.address_space<global>` or 1), "workgroup"
    (`#gpu.address_space<workgroup>` or 3), else the space's own text."""
    space = t.memory_space
    if space is None:
        return "global"
    text = str(space)
    if text in _WORKGROUP:
        return "workgroup"
    if text in _GLOBAL:
        return "global"
    return text


def gpu_dimension(attr: ir.Attribute) -> int:
    """0, 1 or 2 for `#gpu<dim x>`, `y`, `z`."""
    return "xyz".index(str(attr)[-2])


def gpu_shuffle_mode(attr: ir.Attribute) -> str:
    """ "xor", "up", "down" or "idx" of `#gpu<shuffle_mode xor>`."""
    return str(attr).split()[-1].rstrip(">")


def llvm_pointer_space(t: ir.Type) -> int | None:
    """The address space of `!llvm.ptr` (0) or `!llvm.ptr<N>`; None for any other type."""
    match = re.fullmatch(r"!llvm\.ptr(?:<(\d+)>)?", str(t))
    return None if match is None else int(match.group(1) or 0)


@dataclass(frozen=True)
class MatrixAttributes:
    """What `nvvm.ldmatrix`/`nvvm.stmatrix` say about their matrices: `m8n8_b16` when the shape
    is 8x8 and the element type b16 (`shape`/`element` are the printed attributes, for
    messages); `column` for `layout = col` (`.trans`)."""

    m8n8_b16: bool
    column: bool
    shape: str
    element: str


def matrix_attributes(op: ir.Operation) -> MatrixAttributes:
    shape, element = str(op.attributes["shape"]), str(op.attributes["eltType"])
    return MatrixAttributes(
        shape == "#nvvm.ld_st_matrix_shape<m = 8, n = 8>" and element == "#nvvm.ld_st_matrix_elt_type<b16>",
        str(op.attributes["layout"]) == "#nvvm.mma_layout<col>",
        shape,
        element,
    )


@dataclass(frozen=True)
class MmaAttributes:
    """What `nvvm.mma.sync` says about its shape and operands: ``m, n, k``; the PTX types of the
    multiplicands (``"f16"``, ``"bf16"``, ``"tf32"``, ``"s8"``, ``"u8"``, ...; ``None`` where the op
    leaves them to be inferred from the operand types); ``a_row``/``b_col`` for the
    ``row``/``col`` layouts; ``satfinite`` for ``intOverflowBehavior = satfinite``."""

    m: int
    n: int
    k: int
    a_type: str | None
    b_type: str | None
    a_row: bool
    b_col: bool
    satfinite: bool


def _enum_payload(op: ir.Operation, name: str) -> str | None:
    """``x`` of an attribute printed ``#nvvm.something<x>``; None when absent."""
    if name not in op.attributes:
        return None
    match = re.fullmatch(r"#nvvm\.\w+<(\w+)>", str(op.attributes[name]))
    return None if match is None else match.group(1)


def mma_attributes(op: ir.Operation) -> MmaAttributes:
    shape = re.fullmatch(r"#nvvm\.shape<m = (\d+), n = (\d+), k = (\d+)>", str(op.attributes["shape"]))
    if shape is None:
        raise ValueError(f"unexpected nvvm.mma.sync shape {op.attributes['shape']}")
    m, n, k = (int(g) for g in shape.groups())
    return MmaAttributes(
        m,
        n,
        k,
        _enum_payload(op, "multiplicandAPtxType"),
        _enum_payload(op, "multiplicandBPtxType"),
        _enum_payload(op, "layoutA") == "row",
        _enum_payload(op, "layoutB") == "col",
        _enum_payload(op, "intOverflowBehavior") == "satfinite",
    )


def location_text(location: ir.Location) -> str:
    """A location as its text without the `loc(...)` around it."""
    text = str(location)
    return text[4:-1] if text.startswith("loc(") and text.endswith(")") else text


def file_location(location: ir.Location) -> ir.Location | None:
    """The first file location (`loc("file":line:col)`) inside `location`: itself; a name's
    child (TTGIR names values by their locations: `loc("x"("k.py":3:7))`); a call site's callee,
    else its caller (Triton's inlined callees may be `loc(unknown)`); the parts of a fused
    location in order. None when there is none (`loc(unknown)`)."""
    if location.is_a_file():
        return location
    if location.is_a_name():
        inner = [location.child_loc]
    elif location.is_a_callsite():
        inner = [location.callee, location.caller]
    elif location.is_a_fused():
        inner = list(location.locations)
    else:
        return None
    return next((found for found in map(file_location, inner) if found is not None), None)


def source_position(location: ir.Location) -> str:
    """`file:line:col` of the first file location inside `location` (:func:`file_location`:
    under names, call sites and fused locations too), else the location's text.

    >>> with ir.Context():
    ...     source_position(ir.Location.name("x", ir.Location.callsite(
    ...         ir.Location.unknown(), [ir.Location.file("k.py", 3, 7)])))
    'k.py:3:7'
    """
    found = file_location(location)
    if found is None:
        return str(location)
    return f"{found.filename}:{found.start_line}:{found.start_col}"


@dataclass(frozen=True)
class DenseText:
    """The payload of a printed dense attribute: `hex` (little-endian raw bytes), or `values`
    (nested lists of Python numbers; floats written as hex bit patterns are left as ints in
    `bit_patterns`' positions: `float_bits` converts them)."""

    hex: bytes | None
    values: object


def dense_text(attr: ir.Attribute, float_bits=None) -> DenseText:
    """The values of a dense attribute from its text, for element types numpy cannot view.
    `float_bits(int) -> float` turns the hex bit patterns MLIR prints for inf and nan into
    floats (None: integers, where hex cannot occur). ValueError when it is not a dense attribute."""
    text = str(attr)
    body = re.match(r"dense<(.*)>\s*:", text, re.S)
    if body is None:
        raise ValueError(f"constant attribute {text} is not supported")
    payload = body.group(1).strip()
    if payload.startswith('"0x'):  # raw little-endian bytes
        return DenseText(bytes.fromhex(payload[3:-1]), None)
    payload = payload.replace("true", "1").replace("false", "0")
    if float_bits is not None:  # hex tokens are bit patterns (how MLIR prints inf and nan); quote them
        payload = re.sub(r"0x[0-9A-Fa-f]+", lambda m: repr(str(float_bits(int(m.group(0), 16)))), payload)
    return DenseText(None, ast.literal_eval(payload))
