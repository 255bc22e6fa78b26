"""`linear-layout-report`: one row per layout conversion and shared-memory access of a Triton kernel.

    linear-layout-report kernel.ttgir          # a table and a totals line
    linear-layout-report kernel.ttgir --json   # the same data for scripts

For every `ttg.convert_layout` the row gives the plan of `linear_layout.plan_conversion`: the
strategy (no-op, register, shuffle, shared, packed, matrix), shuffles and selects per thread, scratch
bytes, barriers, the store/load vector widths, and the shared-memory wavefronts against their
floor (the bytes moved / 128 per wavefront); below the table, the alternatives the planner
rejected for each conversion, and why. For every `ttg.local_load`, `ttg.local_store` and
initialised `ttg.local_alloc` it gives `linear_layout.bank_conflicts` of that access. Rows carry
the kernel line (MLIR line) and the Python line Triton recorded in the op's location; layouts
are shown as the kernel spells them (aliases such as `#blocked`, `#mma`).

The data is a frozen `KernelReport` built by `build_report(module, ttgir=...)`; `format_text`
and `format_json` only format it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from mlir import ir

from ..core.launch import pad_to_launch
from ..core.layout import LinearLayout
from ..dialects.ttg import LocalView, local_access_view, local_memdesc_type
from ..dialects.verifier import module_chip
from ..encodings import collect_aliases, parse_encoding
from ..ir.bridge import from_attribute, layout_of, memdesc_of
from ..ir.walk import ops_where
from ..passes.ll_explain_conversions import access_element_type
from ..patterns.vectors import element_bits
from ..planning import PlannerError, Strategy, bank_conflicts, plan_conversion, plan_local_access
from ..planning.banks import access_layouts
from ..planning.dot import DotCost
from ..planning.floor import access_bytes, floor_wavefronts
from ..planning.layout_ops import OpCost
from ..ttgir import TtgirError, parse_ttgir, print_ttgir
from ..ttgir.formats import FORMATS, parse_custom
from ..ttgir.reader import attribute_position
from ..ttgir.syntax import Op, Region, TtgirSyntaxError, parse_file
from ..ttgir.types import split_parameters
from .cli import guarded_main
from .report_html import report_page
from .report_ops import (
    DOTS,
    LISTED,
    OtherOp,
    axis_of,
    describe,
    is_atomic,
    ldmatrix_loads,
    no_layout_work,
    predict,
    predict_dot,
)

__all__ = ["Cost", "ReportRow", "KernelReport", "build_report", "report_ttgir", "format_text", "format_json", "main"]

REPORTED = (
    "ttg.convert_layout",
    "ttg.local_load",
    "ttg.local_store",
    "ttg.local_alloc",
    "ttg.async_copy_global_to_local",  # costed as the local_store of its elements (cp.async writes them)
)
# tt.reduce, tt.scan, tt.gather, tt.histogram and atomics are listed, costed, after the table:
# tools/report_ops.py


@dataclass(frozen=True)
class Cost:
    """The predicted cost of one row. Wavefronts are shared-memory wavefronts per CTA (store +
    load for a conversion); `ideal` is the per-access minimum, `floor` the bandwidth floor
    (distinct bytes moved / 128, `planning/floor.py`) and `above_floor` why a plan does not reach
    it. Vector widths are bytes per instruction (0: none). `rejected`: the alternatives the planner
    considered and did not pick, each `strategy (why)`."""

    strategy: str
    shuffles: int = 0
    selects: int = 0
    scratch_bytes: int = 0
    barriers: int = 0
    store_bytes: int = 0
    load_bytes: int = 0
    store_wavefronts: int = 0
    load_wavefronts: int = 0
    ideal: int = 0
    floor: int = 0
    above_floor: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()

    @property
    def wavefronts(self) -> int:
        return self.store_wavefronts + self.load_wavefronts


@dataclass(frozen=True)
class ReportRow:
    op: str
    mlir_line: int
    python: str  # "file.py:52" from the op's location, or ""
    src: str  # the layout as the kernel writes it
    dst: str
    shape: tuple[int, ...]
    element_bits: int
    element: str  # the element type as MLIR prints it (`f16`, `!tt.ptr<f32>`)
    cost: Cost | None  # None: not modelled, `note` says why
    note: str = ""
    # (source, destination) of a conversion; (distributed, shared over the allocation) of an access
    layouts: tuple[LinearLayout, LinearLayout] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class KernelReport:
    kernel: str
    num_warps: int
    threads_per_warp: int
    rows: tuple[ReportRow, ...]
    # tt.reduce, tt.scan, tt.gather and atomics: listed with what the layouts tell, not costed
    others: tuple[OtherOp, ...] = ()
    chip: str | None = None  # what conversions and dots are costed for: the module's ttg.target (None: portable)

    def totals(self) -> dict[str, int]:
        """Every costed row and listed op, summed per column where the column applies:
        ``shuffles`` (per warp) and ``barriers`` of conversions and layout ops (reductions, scans,
        gathers, histograms, atomics); ``scratch_bytes``, the largest of their buffers (pooled);
        ``wavefronts`` and ``floor`` (per CTA) of conversions, accesses, layout ops and dots, a
        dot's ldmatrix in place of the plain loads of the ``ttg.local_load`` rows it replaces
        (``replaced_loads``) and a gather's data-dependent loads at their ideal
        (``data_dependent``); ``not_modelled``: rows and listed ops without a cost."""
        replaced = {line for other in self.others for line in other.loads}
        costs = [r.cost for r in self.rows if r.cost is not None]
        moved = [r.cost for r in self.rows if r.cost is not None and r.mlir_line not in replaced]
        op_costs = [o.cost for o in self.others if isinstance(o.cost, OpCost)]
        dots = [o.cost for o in self.others if isinstance(o.cost, DotCost)]
        conversions = [r for r in self.rows if r.op == "ttg.convert_layout"]
        shared = [(c.wavefronts, c.floor) for c in moved] + [(c.wavefronts, c.floor) for c in op_costs]
        shared += [(c.wavefronts, c.floor) for c in dots]
        return {
            "conversions": len(conversions),
            "shared_accesses": len(self.rows) - len(conversions),
            "through_shared": sum(1 for r in conversions if r.cost and r.cost.strategy in _THROUGH_SHARED),
            "other_ops": len(self.others),
            "shuffles": sum(c.shuffles for c in costs) + sum(c.shuffles for c in op_costs),
            "scratch_bytes": max([c.scratch_bytes for c in costs] + [c.scratch_bytes for c in op_costs], default=0),
            "barriers": sum(c.barriers for c in costs) + sum(c.barriers for c in op_costs),
            "wavefronts": sum(waves for waves, _floor in shared),
            "floor": sum(floor for _waves, floor in shared),
            "replaced_loads": sum(1 for r in self.rows if r.mlir_line in replaced),
            "data_dependent": sum(1 for c in op_costs if c.data_dependent),
            "not_modelled": sum(1 for r in self.rows if r.cost is None) + sum(1 for o in self.others if o.cost is None),
        }


# -- building ---------------------------------------------------------------------------------

_FILE_LINE = re.compile(r'"([^"]+)":(\d+):\d+')


def python_line(location: ir.Location) -> str:
    """`file.py:LINE` of the innermost caller in a Triton location (its last file position)."""
    matches = _FILE_LINE.findall(str(location))
    if not matches:
        return ""
    file_name, line = matches[-1]
    return f"{file_name.rsplit('/', 1)[-1]}:{line}"


def _walk_syntax(ops, found: list[Op], names: tuple[str, ...] = REPORTED) -> None:
    for op in ops:
        if op.name in names:
            found.append(op)
        for piece in op.pieces:
            if isinstance(piece, Region):
                for block in piece.blocks:
                    _walk_syntax(block.ops, found, names)


def _module_ops(module: ir.Module, names: tuple[str, ...] = REPORTED) -> list[ir.Operation]:
    return ops_where(module, lambda op: op.name in names)


def _encoding_text(type_text: str) -> str:
    """The layout part of a tensor or memdesc type as written (`#blocked`)."""
    body = type_text[type_text.index("<") + 1 : type_text.rindex(">")]
    parts = split_parameters(body)
    return parts[1] if len(parts) > 1 else ""


def _written_types(source: str, op: Op) -> list[str]:
    """Operand and result types as the TTGIR text writes them: [from, to]."""
    parsed = parse_custom(FORMATS[op.name], source, op.tokens)
    if parsed.functional is not None:
        return [*parsed.functional[0][:1], *parsed.functional[1]]
    types = parsed.types
    order = {
        "ttg.convert_layout": ("src", "result"),
        "ttg.local_load": ("src", "result"),
        "ttg.local_store": ("src", "dst"),
        "ttg.async_copy_global_to_local": ("src", "result"),
    }[op.name]
    return [types[name][0] for name in order]


def _shape(t: ir.Type) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(t).shape)


def _conversion_cost(src: LinearLayout, dst: LinearLayout, bits: int, threads: int, chip: str | None) -> Cost:
    plan = plan_conversion(src, dst, bitwidth=bits, threads_per_warp=threads, chip=chip)
    rejected = tuple(map(str, plan.rejected))
    if not plan.strategy.uses_shared_memory:
        return Cost(plan.strategy, shuffles=plan.shuffles, selects=plan.selects, rejected=rejected)
    costs, floor = plan.costs(), plan.floor_report()
    assert floor.store is not None and floor.load is not None
    return Cost(
        plan.strategy,
        # the packed sub-32-bit exchange shuffles register pairs before its stores / after its loads
        shuffles=plan.shuffles + (plan.packed.shuffles if plan.packed is not None else 0),
        scratch_bytes=costs.scratch_bytes,
        barriers=costs.barriers,
        store_bytes=floor.store.instruction_bytes,
        load_bytes=floor.load.instruction_bytes,
        store_wavefronts=costs.store_wavefronts,
        load_wavefronts=costs.load_wavefronts,
        ideal=floor.store.ideal_wavefronts + floor.load.ideal_wavefronts,
        floor=floor.floor,
        above_floor=floor.reasons,
        rejected=rejected,
    )


def _access_cost(
    distributed: LinearLayout, memdesc_type: ir.Type, bits: int, kind: str, view: LocalView
) -> tuple[Cost, tuple[LinearLayout, LinearLayout]]:
    """`bank_conflicts` of the access (a subslice: `LocalView.in_allocation`), and the layouts
    (`distributed`, the allocation's shared layout `S`)."""
    shape = list(view.allocation)
    in_allocation = view.in_allocation(distributed)
    registers, smem = access_layouts(in_allocation, from_attribute(memdesc_of(memdesc_type).encoding), shape, kind)
    banks = bank_conflicts(registers, smem, bits, shape, kind=kind)
    access = plan_local_access(registers, smem, bits, shape, kind=kind)
    moved = access_bytes(
        access.thread_offset, access.predicate, access.vector, len(access.instructions), max(1, bits // 8)
    )
    width = banks.instruction_bytes
    floor = floor_wavefronts(moved)
    reasons = (
        ()
        if banks.wavefronts == floor
        else (("bank conflicts",) if banks.wavefronts > banks.ideal_wavefronts else ())
        + (("sub-word or broadcast accesses",) if banks.ideal_wavefronts > floor else ())
    )
    cost = Cost(
        "access",
        store_bytes=width if kind == "store" else 0,
        load_bytes=width if kind == "load" else 0,
        store_wavefronts=banks.wavefronts if kind == "store" else 0,
        load_wavefronts=banks.wavefronts if kind == "load" else 0,
        ideal=banks.ideal_wavefronts,
        floor=floor,
        above_floor=reasons,
    )
    return cost, (distributed, smem)


@dataclass(frozen=True)
class _Launch:
    num_warps: int
    threads_per_warp: int
    chip: str | None = None  # the chip of ``ttg.target`` (sm_80, gfx942): conversions and dots are costed for it


#: The most threads a CTA may have (CUDA's and HIP's limit per block).
_MAX_THREADS = 1024


def _launch(module: ir.Module, text: str) -> _Launch:
    """The module's warps and lanes; a value that is not a power-of-two integer, or a CTA of more
    than 1024 threads, is a TtgirError at the attribute (found by the fuzzer: `"ttg.num-warps" =
    "nope"` made the report fail with an internal error)."""
    attributes = module.operation.attributes

    def value(name: str, default: int) -> int:
        if name not in attributes:
            return default
        attr = attributes[name]
        number = attr.value if isinstance(attr, ir.IntegerAttr) and not isinstance(attr, ir.BoolAttr) else 0
        if number < 1 or number & (number - 1) or number > _MAX_THREADS:
            message = f"'{name}' must be a power-of-two integer up to {_MAX_THREADS}, got {attr}"
            raise TtgirError(message, *attribute_position(text, name))
        return number

    launch = _Launch(value("ttg.num-warps", 4), value("ttg.threads-per-warp", 32), module_chip(module.operation))
    if launch.num_warps * launch.threads_per_warp > _MAX_THREADS:
        raise TtgirError(
            f"{launch.num_warps} warps of {launch.threads_per_warp} threads: more than {_MAX_THREADS} threads per CTA",
            *attribute_position(text, "ttg.num-warps"),
        )
    return launch


def _row(source: str, syntax_op: Op, op: ir.Operation, launch: _Launch) -> ReportRow | None:
    if op.name == "ttg.local_alloc" and not op.operands:
        return None
    written = _written_types(source, syntax_op)
    src_text, dst_text = (_encoding_text(t) for t in written)
    tensor_type = op.operands[0].type if op.name != "ttg.local_load" else op.results[0].type
    ir.RankedTensorType(tensor_type)  # a TypeError for a scalar, as before
    element = access_element_type(op)  # an async copy's tensor holds pointers: the buffer's elements
    bits = element_bits(element)
    base = {
        "op": op.name,
        "mlir_line": syntax_op.line,
        "python": python_line(op.location),
        "src": src_text,
        "dst": dst_text,
        "shape": _shape(tensor_type),
        "element_bits": bits,
        "element": str(element),
    }
    try:
        distributed = pad_to_launch(layout_of(tensor_type), launch.threads_per_warp, launch.num_warps)
        if op.name == "ttg.convert_layout":
            other = pad_to_launch(layout_of(op.results[0].type), launch.threads_per_warp, launch.num_warps)
            cost = _conversion_cost(distributed, other, bits, launch.threads_per_warp, launch.chip)
            return ReportRow(**base, cost=cost, layouts=(distributed, other))
        memdesc_type = local_memdesc_type(op)
        kind = "load" if op.name == "ttg.local_load" else "store"  # an async copy stores
        cost, layouts = _access_cost(distributed, memdesc_type, bits, kind, local_access_view(op))
        return ReportRow(**base, cost=cost, layouts=layouts)
    except (PlannerError, ValueError, TypeError) as error:
        return ReportRow(**base, cost=None, note=" ".join(str(error).split()))


def build_report(module: ir.Module, ttgir: str | None = None, kernel: str = "") -> KernelReport:
    """The report of `module`. Lines and layout spellings come from `ttgir`, the TTGIR text the
    module was read from; without it, from `print_ttgir(module)`."""
    if ttgir is None:
        ttgir = print_ttgir(module)
    syntax_ops: list[Op] = []
    _walk_syntax([item for item in parse_file(ttgir).items if isinstance(item, Op)], syntax_ops)
    module_ops = _module_ops(module)
    if [o.name for o in syntax_ops] != [o.name for o in module_ops]:
        # Malformed nesting MLIR still reads, differently (a fuzz finding: a swapped `} else {`).
        first = next((s for s, o in zip(syntax_ops, module_ops) if s.name != o.name), None)
        where = first or (syntax_ops[len(module_ops)] if len(syntax_ops) > len(module_ops) else None)
        raise TtgirError(
            "the module MLIR reads is not the one the TTGIR text describes (are its regions nested as written?)",
            where.line if where else 0,
            where.column if where else 0,
        )
    launch = _launch(module, ttgir)
    rows = tuple(row for row in (_row(ttgir, s, o, launch) for s, o in zip(syntax_ops, module_ops)) if row is not None)
    load_lines = [(o, s.line) for s, o in zip(syntax_ops, module_ops) if o.name == "ttg.local_load"]
    others = _other_ops(module, ttgir, launch, load_lines)
    return KernelReport(kernel, launch.num_warps, launch.threads_per_warp, rows, others, launch.chip)


def _spelling(tensor: ir.RankedTensorType, aliases: dict[str, str]) -> str:
    """A tensor's encoding as the kernel spells it: the alias of an equal encoding, else its text."""
    try:
        encoding = from_attribute(tensor)
    except (ValueError, TypeError):
        return str(tensor.encoding)
    for name, text in aliases.items():
        try:
            if parse_encoding(text, aliases) == encoding:
                return name
        except ValueError:
            continue
    return str(tensor.encoding)


def _other_op(
    syntax_op: Op,
    op: ir.Operation,
    launch: _Launch,
    aliases: dict[str, str],
    load_lines: list[tuple[ir.Operation, int]],
) -> OtherOp:
    # an atomic's layout is its result's (AMD's buffer atomic takes the pointer first), a dot's too
    by_result = (is_atomic(op.name) or op.name in DOTS) and len(op.results)
    operand = op.results[0].type if by_result else op.operands[0].type
    base = {"op": op.name, "mlir_line": syntax_op.line, "python": python_line(op.location)}
    tensor = operand if isinstance(operand, ir.RankedTensorType) else None
    layout_text = _spelling(tensor, aliases) if tensor is not None and tensor.encoding is not None else ""
    shape = tuple(tensor.shape) if tensor is not None else ()
    try:
        if op.name in DOTS:
            dot = predict_dot(op, launch.num_warps, launch.threads_per_warp, launch.chip)
            loads = ldmatrix_loads(op, launch.num_warps, launch.threads_per_warp, launch.chip)
            lines = tuple(line for load in loads for candidate, line in load_lines if candidate == load)
            detail = describe(op.name, None, None, dot)
            return OtherOp(**base, layout=layout_text, shape=shape, detail=detail, cost=dot, loads=lines)
        cost = predict(op, launch.num_warps, launch.threads_per_warp)
        layout = None
        if tensor is not None:
            layout = pad_to_launch(layout_of(tensor), launch.threads_per_warp, launch.num_warps)
        detail = describe(op.name, layout, axis_of(op), cost)
    except (ValueError, TypeError) as error:
        return OtherOp(**base, layout=layout_text, shape=shape, detail="not modelled: " + " ".join(str(error).split()))
    return OtherOp(**base, layout=layout_text, shape=shape, detail=detail, cost=cost)


def _other_ops(
    module: ir.Module, ttgir: str, launch: _Launch, load_lines: list[tuple[ir.Operation, int]]
) -> tuple[OtherOp, ...]:
    """The listed ops (``report_ops.LISTED``) in kernel order; none when the text and the module
    disagree on them (the costed rows already checked the nesting). ``load_lines``: each
    ``ttg.local_load`` of the module and its kernel line (a dot names those it loads with ldmatrix)."""
    syntax_ops: list[Op] = []
    _walk_syntax([item for item in parse_file(ttgir).items if isinstance(item, Op)], syntax_ops, LISTED)
    module_ops = _module_ops(module, LISTED)
    if [o.name for o in syntax_ops] != [o.name for o in module_ops]:
        return ()
    aliases = collect_aliases(ttgir)
    return tuple(_other_op(s, o, launch, aliases, load_lines) for s, o in zip(syntax_ops, module_ops))


def report_ttgir(text: str, kernel: str = "") -> KernelReport:
    """Parse TTGIR text and build its report (raises `TtgirError` on malformed text)."""
    context = ir.Context()
    module = parse_ttgir(text, context)
    with context:
        return build_report(module, text, kernel)


# -- formatting -------------------------------------------------------------------------------

#: The strategies of a conversion through shared memory.
_THROUGH_SHARED = tuple(strategy for strategy in Strategy if strategy.uses_shared_memory)

_COLUMNS = (
    "line",
    "python",
    "op",
    "layouts",
    "strategy",
    "shfl",
    "scratch",
    "bar",
    "vec st/ld",
    "wavefronts/floor",
    "above the floor",
)


def _cells(row: ReportRow) -> tuple[str, ...]:
    op = row.op.split(".", 1)[1]
    layouts = f"{row.src} -> {row.dst}"
    if row.cost is None:
        note = row.note if len(row.note) <= 72 else row.note[:71] + "…"
        return (str(row.mlir_line), row.python, op, layouts, "not modelled", "", "", "", "", "", note)
    cost = row.cost
    vectors = f"{cost.store_bytes or '-'}/{cost.load_bytes or '-'}" if cost.floor or cost.wavefronts else ""
    waves = f"{cost.wavefronts}/{cost.floor}" if cost.floor or cost.wavefronts else ""
    return (
        str(row.mlir_line),
        row.python,
        op,
        layouts,
        cost.strategy,
        str(cost.shuffles or ""),
        f"{cost.scratch_bytes} B" if cost.scratch_bytes else "",
        str(cost.barriers or ""),
        vectors,
        waves,
        "; ".join(cost.above_floor),
    )


def _rejections(report: KernelReport) -> list[str]:
    """Per conversion row, the alternatives the planner rejected and why (none: no lines)."""
    rows = [r for r in report.rows if r.cost is not None and r.cost.rejected]
    if not rows:
        return []
    return ["rejected (line: strategy (why)):"] + [
        f"  {r.mlir_line}: {'; '.join(r.cost.rejected)}" for r in rows if r.cost
    ]


def other_lines(report: KernelReport) -> list[str]:
    """The listed ops with what is known of them, or the line that says the kernel has no layout
    work (none when there are rows and nothing listed)."""
    if report.others:
        return ["other layout work (predicted per CTA; shuffles per warp):"] + [o.line() for o in report.others]
    return [] if report.rows else [no_layout_work()]


def format_text(report: KernelReport) -> str:
    """A table with one row per conversion/access and a totals line."""
    table = [_COLUMNS] + [_cells(r) for r in report.rows]
    widths = [max(len(row[k]) for row in table) for k in range(len(_COLUMNS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
    lines += _rejections(report)
    lines += other_lines(report)
    lines.append(total_line(report.totals()))
    return "\n".join(lines) + "\n"


def total_line(t: dict[str, int]) -> str:
    """The totals (:meth:`KernelReport.totals`) in words: what was summed and how."""
    notes = [f"{t['not_modelled']} not modelled"] if t["not_modelled"] else []
    if t["replaced_loads"]:
        notes.append(f"the ldmatrix of dots in place of {t['replaced_loads']} local_load row(s)")
    if t["data_dependent"]:
        notes.append(f"{t['data_dependent']} gather(s) at their ideal loads")
    return (
        f"total: {t['conversions']} conversion(s) ({t['through_shared']} through shared memory), "
        f"{t['shared_accesses']} shared-memory access(es), {t['other_ops']} other op(s); "
        f"{t['shuffles']} shuffles per warp, scratch {t['scratch_bytes']} B, {t['barriers']} barriers, "
        f"{t['wavefronts']} wavefronts (floor {t['floor']}) per CTA" + "".join(f"; {note}" for note in notes)
    )


def format_json(report: KernelReport) -> str:
    rows = []
    for row in report.rows:
        data = dataclasses.asdict(row)
        data.pop("layouts")
        if row.cost is not None:
            data["cost"]["wavefronts"] = row.cost.wavefronts
        rows.append(data)
    return (
        json.dumps(
            {
                "kernel": report.kernel,
                "num_warps": report.num_warps,
                "threads_per_warp": report.threads_per_warp,
                "chip": report.chip,
                "rows": rows,
                "others": [dataclasses.asdict(o) for o in report.others],
                "totals": report.totals(),
            },
            indent=2,
        )
        + "\n"
    )


# -- the console script -----------------------------------------------------------------------


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str):
        print(f"linear-layout-report: error: {message}", file=sys.stderr)
        raise SystemExit(1)


def main(argv: list[str] | None = None) -> int:
    """The console script, under the one-line error contract of ``tools.cli`` (a bug is one
    ``internal error`` line, not a traceback; Ctrl-C exits 130, a closed pipe 1)."""
    return guarded_main("linear-layout-report", lambda: _run(argv), (), str)


def _run(argv: list[str] | None) -> int:
    parser = _ArgumentParser(
        prog="linear-layout-report",
        description="Report every layout conversion and shared-memory access of a TTGIR kernel.",
    )
    parser.add_argument("input", help="a .ttgir file (Triton's kernel.asm['ttgir']), or '-' for stdin")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--html", metavar="FILE", help="also write FILE: one self-contained page, the table with each row's picture"
    )
    args = parser.parse_args(argv)
    name = "<stdin>" if args.input == "-" else args.input
    try:
        text = sys.stdin.read() if args.input == "-" else Path(args.input).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        print(f"linear-layout-report: error: cannot read '{name}': {error}", file=sys.stderr)
        return 1
    try:
        report = report_ttgir(text, kernel=name)
    except (TtgirError, TtgirSyntaxError) as error:
        line = getattr(error, "line", 0)
        where = f"{name}:{line}:{error.column}" if line else name
        message = str(error).split(": ", 1)[1] if line else str(error)
        print(f"{where}: error: {message}", file=sys.stderr)
        return 1
    text_report = format_text(report)
    if args.html:
        page = report_page(
            name,
            text,
            _COLUMNS,
            [(row.mlir_line, _cells(row)) for row in report.rows],
            other_lines(report) + [text_report.splitlines()[-1]],
        )
        try:
            Path(args.html).write_text(page, encoding="utf-8")
        except OSError as error:
            print(f"linear-layout-report: error: cannot write '{args.html}': {error.strerror}", file=sys.stderr)
            return 1
    sys.stdout.write(format_json(report) if args.json else text_report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
