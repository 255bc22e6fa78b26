"""SIMT patterns of the tensor ops that touch no shared memory: tile I/O (`ll.load`/`ll.store`),
elementwise `arith`/`math` ops and splat tensor constants.

- `ll.load` / `ll.store` become `vector.load` / `vector.store`, one per group of registers that
  hits consecutive addresses of the innermost dimension (`get_num_consecutive_in_out`, at most
  16 bytes), with an `alignment` attribute where the alignment is provable; only the distinct
  registers of a broadcast layout are loaded or stored;
- elementwise ops are rebuilt on the per-thread vectors; splat tensor constants become splat
  vector constants.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from mlir import ir
from mlir.dialects import arith, math, memref, vector

from ..core.hardware import MAX_ACCESS_BYTES
from ..core.layout import LinearLayout
from ..core.targets import is_amdgpu_chip
from ..dialects.ll import LoadOp, StoreOp
from ..planning import register_maps
from .apply_layout import constant_int_value
from .common import cast_to
from .kernel import KernelBuilder, Launch, LoweringError, hardware_layout, vector_type
from .simt_pattern import SimtPattern
from .triton_math import exp_approx
from .vectors import concat, concat_units, from_units, gather, to_units, unit

__all__ = [
    "CONSTANT",
    "ELEMENTWISE",
    "ELEMENTWISE_DIALECTS",
    "TILE_LOAD",
    "TILE_STORE",
    "elementwise_roots",
    "on_tensors",
]

ELEMENTWISE_DIALECTS = ("arith", "math")


def _element_bytes(t: ir.Type) -> int:
    if isinstance(t, ir.IntegerType):
        return max(1, (t.width + 7) // 8)
    if isinstance(t, ir.IndexType):
        return 8
    width = getattr(t, "width", None)
    if width is None:
        raise LoweringError(f"unsupported element type {t}")
    return width // 8


def _is_tensor(t: ir.Type) -> bool:
    return isinstance(t, ir.RankedTensorType)


# ---------------------------------------------------------------------------- tile I/O


@dataclass(frozen=True)
class TilePlan:
    """How a tile access goes: the layout, its broadcast-free form, registers per access and
    the provable alignment in bytes."""

    layout: LinearLayout
    reduced: LinearLayout
    vec: int
    alignment: int


def _is_identity_layout(memref_type: ir.MemRefType) -> bool:
    layout = memref_type.layout
    return not layout or (
        isinstance(layout, ir.AffineMapAttr) and layout.value == ir.AffineMap.get_identity(memref_type.rank)
    )


def _alignment(memref_type: ir.MemRefType, offsets: list[ir.Value], vec: int, element_bytes: int) -> int:
    shape = list(memref_type.shape)
    strides_ok = all(not ir.ShapedType.is_dynamic_size(s) for s in shape[1:]) and (
        len(shape) == 1 or shape[-1] % vec == 0
    )
    offsets_ok = True
    if offsets:
        known = constant_int_value(offsets[-1])
        offsets_ok = known is not None and known % vec == 0
    return vec * element_bytes if strides_ok and offsets_ok else element_bytes


def tile_plan(
    tensor_type: ir.RankedTensorType, memref_type: ir.MemRefType, offsets: list[ir.Value], launch: Launch
) -> TilePlan:
    layout = hardware_layout(tensor_type, launch)
    element_bytes = _element_bytes(tensor_type.element_type)
    reduced = layout.remove_zero_bases_along_dim("register")
    vec = 1
    if _is_identity_layout(memref_type):
        minor_first = reduced.transpose_outs(list(reversed(layout.get_out_dim_names())))
        vec = minor_first.get_num_consecutive_in_out()
        vec = max(1, min(vec, MAX_ACCESS_BYTES // element_bytes, reduced.get_in_dim_size("register")))
    alignment = _alignment(memref_type, offsets, vec, element_bytes) if vec > 1 else element_bytes
    return TilePlan(layout, reduced, vec, alignment)


def _addresses(builder: KernelBuilder, plan: TilePlan, offsets: list[ir.Value]) -> list[list[ir.Value]]:
    """Per access (registers r0 = k*vec), the memref indices."""
    reduced = plan.reduced
    base = builder.apply(reduced, builder.hw_indices(0))
    zero = {"lane": 0, "warp": 0, "block": 0}
    accesses = []
    for r0 in range(0, reduced.get_in_dim_size("register"), plan.vec):
        constant = reduced.apply({"register": r0, **zero})
        indices = []
        for k, dim in enumerate(reduced.get_out_dim_names()):
            coordinate = base[dim]
            if constant[dim]:
                coordinate = arith.xori(coordinate, builder.const_i32(constant[dim]))
            index = arith.index_castui(ir.IndexType.get(), coordinate)
            if offsets:
                index = arith.addi(index, offsets[k])
            indices.append(index)
        accesses.append(indices)
    return accesses


def _check_load(op: LoadOp, launch: Launch) -> TilePlan:
    return tile_plan(op.result.type, op.memref.type, op.offsets, launch)


def _emit_load(op: LoadOp, launch: Launch, plan: TilePlan) -> list[ir.Value]:
    tensor_type = op.result.type
    builder = KernelBuilder(op, launch)
    element = tensor_type.element_type
    accesses = _addresses(builder, plan, op.offsets)
    if plan.vec == 1:  # scalars: a concatenation of 1-element vectors would canonicalize to interleaves
        value = vector.from_elements(
            ir.VectorType.get([len(accesses)], element), [memref.load(op.memref, indices) for indices in accesses]
        )
    else:
        piece_type = ir.VectorType.get([plan.vec], element)
        pieces = [vector.load(piece_type, op.memref, indices, alignment=plan.alignment) for indices in accesses]
        size = unit([range(plan.vec)], element) if len(pieces) > 1 else 1
        if size > 1:  # concatenate packed units (an i8 pair is one i16), not single registers
            value = from_units(concat_units([to_units(piece, size, element) for piece in pieces]), size, element)
        else:
            value = concat(pieces)
    full_of, reduced_of = register_maps(plan.layout)
    if len(reduced_of) != len(full_of):
        value = vector.shuffle(value, value, reduced_of)
    return [cast_to(value, tensor_type)]


def _check_store(op: StoreOp, launch: Launch) -> TilePlan:
    return tile_plan(op.value.type, op.memref.type, op.offsets, launch)


def _emit_store(op: StoreOp, launch: Launch, plan: TilePlan) -> list[ir.Value]:
    tensor_type = op.value.type
    builder = KernelBuilder(op, launch)
    value = cast_to(op.value, builder.vector_type(tensor_type))
    full_of, _ = register_maps(plan.layout)
    all_registers = list(range(plan.layout.get_in_dim_size("register")))
    for k, indices in enumerate(_addresses(builder, plan, op.offsets)):
        registers = [full_of[r] for r in range(k * plan.vec, (k + 1) * plan.vec)]
        if plan.vec == 1:
            memref.store(vector.extract(value, [], registers), op.memref, indices)
            continue
        piece = value if registers == all_registers else gather(value, registers, tensor_type.element_type)
        vector.store(piece, op.memref, indices, alignment=plan.alignment)
    return []


TILE_LOAD = SimtPattern((LoadOp,), _check_load, _emit_load)
TILE_STORE = SimtPattern((StoreOp,), _check_store, _emit_store)


# ---------------------------------------------------------------------------- elementwise


def _is_scalar(t: ir.Type) -> bool:
    return isinstance(t, ir.IndexType | ir.IntegerType | ir.FloatType)


def _check_elementwise(op: ir.OpView, launch: Launch) -> None:
    name = op.operation.name
    if len(op.regions):
        raise LoweringError(f"'{name}' has regions; control flow cannot be lowered to SIMT form yet")
    layout = None
    for value in list(op.operands) + list(op.results):
        if _is_tensor(value.type):
            this = hardware_layout(value.type, launch)
            if layout is not None and this != layout:
                raise LoweringError(f"'{name}' mixes tensors with different layouts; insert ttg.convert_layout")
            layout = this
        elif not _is_scalar(value.type):
            raise LoweringError(f"'{name}' has an operand of unsupported type {value.type}")
    if layout is not None and any(not _is_tensor(v.type) for v in op.operands):
        raise LoweringError(f"'{name}' mixes tensors and scalars")


def _emit_elementwise(op: ir.OpView, launch: Launch, plan: None) -> list[ir.Value]:
    operation = op.operation
    operands = [cast_to(v, vector_type(v.type, launch)) for v in operation.operands]
    result = operation.results[0] if len(operation.results) == 1 else None
    if (
        operation.name == "math.exp"
        and not is_amdgpu_chip(launch.chip)
        and result is not None
        and isinstance(ir.RankedTensorType(result.type).element_type, ir.F32Type)
    ):  # Triton's: `ex2.approx.f32` of x * log2(e), not libdevice's `__nv_expf`
        return [cast_to(exp_approx(operands[0]), result.type)]
    attributes = {name: operation.attributes[name] for name in operation.attributes}
    new = ir.Operation.create(
        operation.name,
        results=[vector_type(r.type, launch) for r in operation.results],
        operands=operands,
        attributes=attributes,
    )
    return [cast_to(result, old.type) for result, old in zip(new.results, operation.results)]


def on_tensors(op: ir.OpView) -> bool:
    """Whether `op` has a tensor operand or result (an op on scalars is left as it is)."""
    return any(_is_tensor(v.type) for v in list(op.operation.operands) + list(op.operation.results))


def elementwise_roots() -> tuple[type, ...]:
    """The op classes of every `arith` and `math` op but `arith.constant`."""
    classes = []
    for module in (arith, math):
        for value in vars(module).values():
            name = getattr(value, "OPERATION_NAME", None)
            if (
                isinstance(value, type)
                and issubclass(value, ir.OpView)
                and isinstance(name, str)
                and name.split(".")[0] in ELEMENTWISE_DIALECTS
                and name != "arith.constant"
            ):
                classes.append(value)
    return tuple(sorted(set(classes), key=lambda c: cast(Any, c).OPERATION_NAME))


ELEMENTWISE = SimtPattern(
    elementwise_roots(), _check_elementwise, _emit_elementwise, matches=on_tensors, label="elementwise arith/math ops"
)


# ---------------------------------------------------------------------------- constants


def _check_constant(op: arith.ConstantOp, launch: Launch) -> None:
    t = op.result.type
    if not _is_tensor(t):
        raise LoweringError("not a tensor constant")
    attr = op.operation.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr) or not attr.is_splat:
        raise LoweringError("only splat tensor constants can be lowered (a non-splat constant depends on the thread)")
    vector_type(t, launch)


def _emit_constant(op: arith.ConstantOp, launch: Launch, plan: None) -> list[ir.Value]:
    t = op.result.type
    target = vector_type(t, launch)
    splat = ir.DenseElementsAttr.get_splat(target, op.operation.attributes["value"].get_splat_value())
    return [cast_to(arith.constant(target, splat), t)]


CONSTANT = SimtPattern(
    (arith.ConstantOp,), _check_constant, _emit_constant, matches=on_tensors, label="splat constants"
)
