"""`ll-explain-conversions`: annotate every `ttg.convert_layout` with how `ll-to-simt` will lower it.

Each conversion gets a string attribute `ll.explain` holding the plan's summary: the strategy of
the decision tree (no-op, register permutation, warp shuffles, shared memory) and its cost --
shuffles and selects, or scratch bytes, repetitions, barriers, access widths, predicted
wavefronts against the ideal, and index operations -- and, for shared memory, the bandwidth
floor: `floor F: reached`, or `above the floor F:` and why (bank conflicts, sub-word accesses,
broadcast; `planning/floor.py`). With `chip=sm_90` (as `ll-lower{chip=sm_90}`) the plan may use
ldmatrix/stmatrix. The IR is otherwise unchanged, so the pass can run before `ll-lower` to see
what the lowering is about to do. Each `ttg.local_load`, `ttg.local_store`, initialised
`ttg.local_alloc` and `ttg.async_copy_global_to_local` (the store of its elements) gets the
`bank_conflicts` of its access (vector width, instructions, wavefronts against the ideal), or
`not modelled: <why>` for a shared layout the planner cannot read:

    linear-layout-opt -p 'builtin.module(ll-explain-conversions{chip=sm_90})' kernel.mlir
"""

from __future__ import annotations

import dataclasses

from mlir import ir

from ..core.launch import pad_to_launch
from ..core.layout import LinearLayout
from ..core.targets import is_amdgpu_chip
from ..dialects import ops_of
from ..dialects.ttg import ConvertLayoutOp, local_access_view, local_memdesc_type
from ..dialects.verifier import module_chip
from ..ir.bridge import from_attribute, layout_of, memdesc_of
from ..ir.walk import walk
from ..patterns.dot import operand_ldmatrix_side
from ..patterns.vectors import element_bits
from ..planning import bank_conflicts, plan_conversion
from ..planning.dot import DotCost, dot_cost
from ..planning.floor import explain
from ..planning.layout_ops import OpCost, atomic_cost, gather_cost, histogram_cost, reduce_cost, scan_cost
from ..planning.matrix import MatrixSide
from . import Pass
from .ll_to_simt import ChipOption, target_problems

ATTRIBUTE = "ll.explain"

#: The layout work besides conversions and shared-memory accesses, annotated (and listed by
#: ``linear-layout-report``) with its predicted cost: ``planning/layout_ops.py``.
LAYOUT_OPS = (
    "tt.reduce",
    "tt.scan",
    "tt.gather",
    "tt.histogram",
    "tt.atomic_rmw",
    "tt.atomic_cas",
    "amdg.buffer_atomic_rmw",
)

#: The dots: ``tt.dot`` (costed), and sm_90's wgmma (listed, not costed: not lowered).
DOTS = ("tt.dot", "ttng.warp_group_dot")


def is_atomic(name: str) -> bool:
    """Whether layout op ``name`` is an atomic (one per element a thread holds)."""
    return "atomic" in name


def axis_of(op: ir.Operation) -> int | None:
    """The op's ``axis`` attribute, or None."""
    attributes = op.attributes
    return ir.IntegerAttr(attributes["axis"]).value if "axis" in attributes else None


def _padded(value: ir.Value, num_warps: int, threads_per_warp: int) -> LinearLayout | None:
    """The layout of ``value``'s tensor padded to the launch (None: a scalar)."""
    if not isinstance(value.type, ir.RankedTensorType):
        return None
    return pad_to_launch(layout_of(value.type), threads_per_warp, num_warps)


def predict(op: ir.Operation, num_warps: int, threads_per_warp: int) -> OpCost:
    """The predicted cost of layout op ``op`` (``planning/layout_ops.py``).

    Requires: ``op.name`` in :data:`LAYOUT_OPS`; its tensors have layouts (ValueError/TypeError
    otherwise)."""

    def padded(value: ir.Value) -> LinearLayout | None:
        return _padded(value, num_warps, threads_per_warp)

    operands = list(op.operands)
    layout = padded(operands[0])
    if is_atomic(op.name):
        used = bool(op.results) and any(True for _ in op.results[0].uses)
        result = padded(op.results[0]) if op.results else layout
        return atomic_cost(result, element_bits(op.results[0].type.element_type) if used and result else 0)
    if layout is None:
        raise ValueError(f"{op.name} of a scalar")
    if op.name == "tt.gather":
        indices = padded(operands[1])
        assert indices is not None
        return gather_cost(layout, indices, element_bits(operands[0].type.element_type), axis_of(op) or 0)
    if op.name == "tt.histogram":
        result = padded(op.results[0])
        assert result is not None
        return histogram_cost(layout, result)
    axis = axis_of(op)
    assert axis is not None
    bits = [element_bits(v.type.element_type) for v in operands]
    if op.name == "tt.scan":
        return scan_cost(layout, axis, bits)
    return reduce_cost(layout, axis, bits, padded(op.results[0]))


def _summary(op: ConvertLayoutOp, chip: str | None) -> str:
    """The plan's summary and its floor; ValueError when there is no plan."""
    src_type, dst_type = op.src.type, op.result.type
    try:
        bits = element_bits(src_type.element_type)
        src, dst = layout_of(src_type), layout_of(dst_type)
        lanes = src.get_in_dim_size("lane") if src.has_in_dim("lane") else 32  # AMD CDNA: 64
        return explain(plan_conversion(src, dst, bitwidth=bits, chip=chip, threads_per_warp=lanes))
    except (TypeError, ValueError) as error:
        raise ValueError(f"cannot explain the conversion of {src_type} to {dst_type}: {error}") from None


#: The shared-memory accesses annotated with their bank conflicts, and their direction. An async
#: copy (cp.async) stores its elements into the buffer: it is costed as that store, as the report
#: costs it.
_LOCAL_ACCESSES = {
    "ttg.local_load": "load",
    "ttg.local_store": "store",
    "ttg.local_alloc": "store",
    "ttg.async_copy_global_to_local": "store",
}


def _local_accesses(op: ir.Operation) -> list[ir.Operation]:
    """local_load / local_store / local_alloc with an initial value / async_copy_global_to_local,
    in walk order."""
    found = []

    def visit(child: ir.Operation) -> ir.WalkResult:
        if child.name in _LOCAL_ACCESSES and (child.name != "ttg.local_alloc" or len(child.operands)):
            found.append(child)
        return ir.WalkResult.ADVANCE

    walk(op, visit)
    return found


def access_element_type(op: ir.Operation) -> ir.Type:
    """The element type a shared-memory access moves: its tensor's, or for an async copy (whose
    tensor holds pointers) its buffer's."""
    if op.name == "ttg.async_copy_global_to_local":
        return memdesc_of(op.operands[1].type).element_type
    tensor = op.results[0] if op.name == "ttg.local_load" else op.operands[0]
    return tensor.type.element_type


def _access_summary(op: ir.Operation) -> str:
    """The bank conflicts of one shared-memory access, or why it is not modelled."""
    kind = _LOCAL_ACCESSES[op.name]
    tensor_type = op.results[0].type if op.name == "ttg.local_load" else op.operands[0].type
    try:
        view = local_access_view(op)  # a subslice costs what it costs over its allocation's layout
        banks = bank_conflicts(
            view.in_allocation(layout_of(tensor_type)),
            from_attribute(memdesc_of(local_memdesc_type(op)).encoding),
            element_bits(access_element_type(op)),
            list(view.allocation),
            kind=kind,
        )
    except (TypeError, ValueError) as error:
        return f"not modelled: {' '.join(str(error).split())}"
    return (
        f"{kind} {banks.instructions} x {banks.instruction_bytes} B per thread "
        f"({banks.wavefronts} wavefronts, ideal {banks.ideal_wavefronts})"
    )


def _layout_ops(op: ir.Operation) -> list[ir.Operation]:
    """The :data:`LAYOUT_OPS` and :data:`DOTS` under ``op``, in walk order."""
    found = []
    names = (*LAYOUT_OPS, *DOTS)

    def visit(child: ir.Operation) -> ir.WalkResult:
        if child.name in names:
            found.append(child)
        return ir.WalkResult.ADVANCE

    walk(op, visit)
    return found


def _launch(op: ir.Operation) -> tuple[int, int]:
    """(num_warps, threads_per_warp) of the module around ``op`` (Triton's defaults 4 and 32)."""
    module = op
    while module.name != "builtin.module" and module.parent is not None:
        module = module.parent
    attributes = module.attributes

    def value(name: str, default: int) -> int:
        return ir.IntegerAttr(attributes[name]).value if name in attributes else default

    return value("ttg.num-warps", 4), value("ttg.threads-per-warp", 32)


def _layout_op_summary(op: ir.Operation, chip: str | None) -> str:
    """The predicted cost of one layout op or dot (for ``chip``), or why it is not modelled."""
    try:
        if op.name in DOTS:
            return predict_dot(op, *_launch(op), chip).summary()
        return predict(op, *_launch(op)).summary()
    except (TypeError, ValueError) as error:
        return f"not modelled: {' '.join(str(error).split())}"


def _operand_side(value: ir.Value, layout: LinearLayout, num_warps: int, chip: str | None) -> MatrixSide | None:
    """The ldmatrix of a dot operand that a ``ttg.local_load`` reads (None: none)."""
    owner = value.owner
    if not isinstance(owner, ir.OpView) or owner.operation.name != "ttg.local_load":
        return None
    memdesc = owner.operation.operands[0].type
    return operand_ldmatrix_side(layout, memdesc, value.type.element_type, num_warps, chip)


def _operand_loads(
    op: ir.Operation, num_warps: int, threads_per_warp: int, chip: str | None
) -> tuple[tuple[ir.Operation | None, MatrixSide | None], ...]:
    """For operands a and b of ``tt.dot`` ``op``: the ``ttg.local_load`` that loads it (None: none)
    and its ldmatrix side (None: plain shared loads, or no local_load)."""
    found = []
    for value in (op.operands[0], op.operands[1]):
        layout = pad_to_launch(layout_of(value.type), threads_per_warp, num_warps)
        side = _operand_side(value, layout, num_warps, chip)
        owner = value.owner
        load = owner.operation if isinstance(owner, ir.OpView) and owner.operation.name == "ttg.local_load" else None
        found.append((load, side))
    return tuple(found)


def ldmatrix_loads(op: ir.Operation, num_warps: int, threads_per_warp: int, chip: str | None) -> list[ir.Operation]:
    """The ``ttg.local_load`` ops of ``tt.dot`` ``op``'s operands that the lowering for ``chip``
    turns into ldmatrix (:func:`predict_dot` costs them; their plain loads do not happen)."""
    if op.name != "tt.dot":
        return []
    return [load for load, side in _operand_loads(op, num_warps, threads_per_warp, chip) if load and side]


def predict_dot(op: ir.Operation, num_warps: int, threads_per_warp: int, chip: str | None) -> DotCost:
    """The predicted cost of ``tt.dot`` ``op`` (`planning.dot.dot_cost`), its operands loaded
    from shared memory with ldmatrix where the lowering for ``chip`` would.

    Requires: tensors with layouts (ValueError/TypeError otherwise); PlannerError (a ValueError)
    when the layouts fit neither the FMA nor the mma.sync path; a ValueError for sm_90's wgmma
    (``ttng.warp_group_dot``) and for a dot off the FMA path without an NVIDIA target (AMD's
    MFMA/WMMA), which the lowering does not build."""
    if op.name != "tt.dot":
        raise ValueError(f"{op.name} (wgmma, #ttg.nvidia_mma version 3) is not lowered")
    a, b = op.operands[0], op.operands[1]
    a_layout, b_layout, c_layout = (
        pad_to_launch(layout_of(v.type), threads_per_warp, num_warps) for v in (a, b, op.results[0])
    )
    sides = tuple(side for _load, side in _operand_loads(op, num_warps, threads_per_warp, chip))
    element = str(a.type.element_type)
    nvidia = chip is not None and not is_amdgpu_chip(chip)  # mma.sync: an NVIDIA chip only
    cost = dot_cost(a_layout, b_layout, c_layout, element, threads_per_warp, sides, mma=nvidia)
    if cost is None:
        raise ValueError("a dot off the FMA path for a target that is not NVIDIA's (MFMA/WMMA) is not lowered")
    return cost


@dataclasses.dataclass(frozen=True)
class LLExplainConversions(ChipOption, Pass):
    argument = "ll-explain-conversions"
    summary = "Annotate each ttg.convert_layout with its lowering strategy and predicted cost (ll.explain)"

    def chip_for(self, op: ir.Operation) -> str | None:
        """The chip everything is costed for: the ``chip`` option, else the module's ``ttg.target``
        (``dialects.verifier.module_chip``), else None (portable)."""
        return self.target_chip or module_chip(op)

    def problems(self, op: ir.Operation) -> list[tuple[ir.Location, str]]:
        wrong_target = target_problems(op)
        if wrong_target:
            return wrong_target
        chip = self.chip_for(op)
        errors = []
        for conversion in ops_of(op, ConvertLayoutOp):
            try:
                _summary(conversion, chip)
            except ValueError as error:
                errors.append((conversion.location, str(error)))
        return errors

    def apply(self, op: ir.Operation) -> None:
        chip = self.chip_for(op)
        for conversion in ops_of(op, ConvertLayoutOp):
            conversion.operation.attributes[ATTRIBUTE] = ir.StringAttr.get(
                _summary(conversion, chip), context=op.context
            )
        for access in _local_accesses(op):
            access.attributes[ATTRIBUTE] = ir.StringAttr.get(_access_summary(access), context=op.context)
        for layout_op in _layout_ops(op):
            summary = _layout_op_summary(layout_op, chip)
            layout_op.attributes[ATTRIBUTE] = ir.StringAttr.get(summary, context=op.context)


PASS = LLExplainConversions
