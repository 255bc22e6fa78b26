r"""The single conversion planner: :func:`plan_conversion` -> one frozen :class:`ConversionPlan`.

The decision, for ``src``/``dst`` with their zero register bases removed and
``cvt = dst.invert_and_compose(src)`` with trailing trivial ``block``, ``warp``, ``lane``
dimensions quotiented away (Triton's ``minimalCvtLayout``):

1. ``block`` or ``warp`` left in ``cvt``: **shared** memory (data moves between warps);
2. ``lane`` left: **shuffle** when ``cvt``'s outputs are exactly ``(register, lane)``, the
   register/lane conversion is a bit permutation with at most one mixed register/lane
   transposition (Triton's criterion, :func:`~linear_layout.planning.in_warp.warp_decomposition`)
   and the in-warp rounds exist (:func:`~linear_layout.planning.in_warp.in_warp_rounds`);
   otherwise **shared**, and ``reason`` says which condition failed. When the rounds need no
   shuffle at all the plan is a **register** permutation;
3. ``register`` left: **register** permutation within each thread (the rounds are the
   permutation: every round reads the thread's own lane);
4. nothing left: **noop**.

For (3) and (4) the rounds always exist in practice; if they did not, the plan would use shared
memory with the reason (the planner never returns a plan its emitter cannot run).

Interface for code generation
=============================
``plan = plan_conversion(src, dst, shape, bitwidth)`` is one of :data:`StrategyPlan`, the frozen
class of its :class:`Strategy`: ``plan.strategy`` is ``"noop"``, ``"register"``, ``"shuffle"``,
``"shared"``, ``"packed"`` or ``"matrix"`` (the last three through shared memory), ``plan.reason``
why, and ``plan.rejected`` the alternatives considered and why each was not picked.

* noop / register / shuffle: ``plan.rounds`` (one per reduced destination register; see
  :class:`~linear_layout.planning.in_warp.Round`), ``plan.select_basis``,
  ``plan.reader_basis``/``plan.reader_select``, and ``plan.src_registers``/``plan.dst_registers``
  (:class:`~linear_layout.planning.in_warp.RegisterMap`: full <-> reduced register indices).
* shared, packed, matrix: ``plan.shared`` (:class:`~linear_layout.planning.shared.SharedPlan`). Per CTA::

    base_st = plan.shared.store.thread_offset.apply(lane=, warp=)   # once per kernel
    base_ld = plan.shared.load.thread_offset.apply(lane=, warp=)
    for rep in range(plan.shared.num_reps):                    # the repetition loop
        if rep: barrier                                        # WAR: previous loads are done
        if plan.shared.store.predicate holds:                  # broadcast copies are written once
            for ins in plan.shared.store.instructions if ins.rep == rep:
                vector.store [src regs ins.registers...] at smem[base_st ^ ins.offset]
        barrier
        for ins in plan.shared.load.instructions if ins.rep == rep:
            dst regs ins.registers... = vector.load smem[base_ld ^ ins.offset]
    for (r, s) in plan.shared.load.copies: dst reg r = dst reg s   # broadcast registers

  Offsets are in **elements** of ``bitwidth`` bits from the start of the scratch buffer
  (``plan.shared.scratch_bytes`` long, 128-byte aligned). ``ins.offset`` has no bit in common
  with the thread offsets of its side when ``ins.additive`` (then ``^`` is ``+``, an immediate).
  ``ins.registers`` index the thread's full register vector (broadcast registers included), in
  vector order; each access is ``len(registers) * bitwidth / 8`` bytes (at most 16), aligned to
  its size. ``store.predicate`` is ``{"lane": m, "warp": m, "block": m}``: a thread stores iff
  ``dim & m == 0`` for all three. ``store.offsets``/``load.offsets`` are
  ``(register, lane, warp, block) -> (offset, reps)``.

  The shared layout ``plan.shared.smem`` maps ``vector``, ``bank``, ``segment``, ``reps`` (and
  ``block``) onto ``dim0..``; the offset of an element is ``vector | bank << v | segment << (v + b)``.

  Packed (``plan.packed``, sub-32-bit data, :mod:`~linear_layout.planning.packed`): the source
  registers first go through ``plan.packed.src_steps`` (register/lane swaps, each a
  ``gpu.shuffle xor`` exchange), the loaded registers through ``plan.packed.dst_steps``; the
  register indices of ``plan.shared`` are those of the swapped layouts ``plan.packed.src``/``dst``.

  Matrix (``plan.matrix``, :mod:`~linear_layout.planning.matrix`): ``ldmatrix``/``stmatrix`` run
  instead of ``plan.shared``'s accesses, which the plan keeps for comparison.

Errors: :class:`~linear_layout.planning.layouts.PlannerError` (a ``ValueError``) for layouts
that do not describe one tensor on one launch; ``TypeError`` for arguments that are not layouts.
Plans are cached per (layouts, options); a plan is immutable, so sharing it is safe.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, TypedDict

import numpy as np

from ..core import display
from ..core.arguments import require_bool
from ..core.hardware import MAX_REGISTERS_PER_THREAD
from ..core.layout import LinearLayout
from .floor import FloorReport, floor_of
from .in_warp import (
    InWarpPlan,
    InWarpRefusal,
    RegisterMap,
    Round,
    WarpDecomposition,
    in_warp_rounds,
    register_maps,
    warp_decomposition,
)
from .layouts import LayoutLike, PlannerError, as_hardware_layout
from .matrix import MatrixPlan, choose_matrix_plan, matrix_instructions
from .packed import PackedExchange, plan_packed
from .shared import SharedPlan, plan_shared
from .triton_scratch import triton_scratch_bytes

__all__ = [
    "STRATEGIES",
    "ConversionDrawing",
    "ConversionPlan",
    "ExchangeCosts",
    "InWarpConversion",
    "MatrixConversion",
    "NoopConversion",
    "PackedConversion",
    "RegisterConversion",
    "Rejection",
    "SharedConversion",
    "SharedMemoryConversion",
    "ShuffleConversion",
    "Strategy",
    "StrategyPlan",
    "minimal_conversion",
    "plan_conversion",
]


class Strategy(enum.StrEnum):
    """How a conversion runs, cheapest first. A ``str``: ``plan.strategy == "shared"`` holds."""

    NOOP = "noop"  # the layouts agree
    REGISTER = "register"  # registers move within each thread
    SHUFFLE = "shuffle"  # lanes exchange registers with warp shuffles
    SHARED = "shared"  # store to shared memory, barrier, load
    PACKED = "packed"  # sub-32-bit data: register/lane swaps around a word-wide shared exchange
    MATRIX = "matrix"  # a shared exchange with ldmatrix/stmatrix on one side or both

    @property
    def uses_shared_memory(self) -> bool:
        """Whether the conversion needs a scratch buffer and barriers."""
        return self in (Strategy.SHARED, Strategy.PACKED, Strategy.MATRIX)


#: The strategies, cheapest first.
STRATEGIES = tuple(Strategy)

#: Why a sub-32-bit shared exchange is not packed when packing has nothing to gain.
NOTHING_TO_PACK = "no sub-word access keeps the exchange above the floor"


@dataclass(frozen=True)
class Rejection:
    """An alternative the planner considered and did not pick, and why."""

    strategy: Strategy
    reason: str

    def __str__(self) -> str:
        return f"{self.strategy} ({self.reason})"


@dataclass(frozen=True)
class ExchangeCosts:
    """The shared-memory costs of a plan, per CTA (zero for plans that do not use shared memory)."""

    scratch_bytes: int
    barriers: int
    bank_conflicts: int
    store_wavefronts: int
    load_wavefronts: int
    index_ops: int


_NO_COSTS = ExchangeCosts(0, 0, 0, 0, 0, 0)


@dataclass(frozen=True)
class ConversionDrawing:
    """What a picture of a plan shows (``draw/conversion.py``): the shared-memory accesses, with
    the layouts whose registers they move, or the in-warp rounds, and notes."""

    shared: SharedPlan | None  # None: the conversion stays in a warp (``rounds``)
    src: LinearLayout  # whose registers the stores move (a packed plan's swapped source)
    dst: LinearLayout
    rounds: tuple[Round, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ConversionPlan:
    """How ``convert_layout`` from ``src`` to ``dst`` runs: the fields every strategy has.

    A plan is one of the classes of :data:`StrategyPlan`, one per :class:`Strategy`; each has
    its own data, ``costs()``, ``summary()`` and ``drawing()``. ``reason`` says why this strategy
    was picked and ``rejected`` why each alternative the planner considered was not.
    """

    strategy: ClassVar[Strategy]
    reason: str
    src: LinearLayout  # as given, every hardware input dimension present
    dst: LinearLayout
    conversion: LinearLayout  # the minimal conversion (reduced registers)
    bitwidth: int
    src_registers: RegisterMap
    dst_registers: RegisterMap
    rejected: tuple[Rejection, ...] = ()

    # Jupyter: a picture once linear_layout.draw has registered one (core.display)
    _repr_svg_ = display.repr_svg
    _repr_html_ = display.repr_html

    def costs(self) -> ExchangeCosts:
        """The shared-memory costs of what runs (all zero for in-warp plans)."""
        return _NO_COSTS

    def summary(self) -> str:
        """One line: the strategy and its cost."""
        return f"{self.strategy} ({self.reason})"

    def floor_report(self) -> FloorReport:
        """The bandwidth floor of what runs (``planning/floor.py``; empty for in-warp plans)."""
        return FloorReport(None, None)

    def drawing(self) -> ConversionDrawing:
        """What a picture of the plan shows."""
        return ConversionDrawing(None, self.src, self.dst, ())

    def rejections(self) -> str:
        """``rejected: a (why); b (why)``, or ``""`` when the planner rejected nothing."""
        return "rejected: " + "; ".join(map(str, self.rejected)) if self.rejected else ""

    # flat views of costs() -----------------------------------------------------------
    scratch_bytes = property(lambda self: self.costs().scratch_bytes, doc="Scratch bytes of one round.")
    barriers = property(lambda self: self.costs().barriers, doc="Barriers per conversion.")
    bank_conflicts = property(lambda self: self.costs().bank_conflicts, doc="Wavefronts above the per-access minimum.")
    store_wavefronts = property(lambda self: self.costs().store_wavefronts, doc="Wavefronts of the stores.")
    load_wavefronts = property(lambda self: self.costs().load_wavefronts, doc="Wavefronts of the loads.")
    index_ops = property(lambda self: self.costs().index_ops, doc="Predicted index operations.")

    @property
    def floor_wavefronts(self) -> int:
        """The bandwidth floor of what runs: ``ceil(stored bytes / 128) + ceil(loaded bytes / 128)``
        (``planning/floor.py``: ``floor_of(plan)`` also says why a plan is above it)."""
        return self.floor_report().floor


# ------------------------------------------------------------------------ in a warp


@dataclass(frozen=True, kw_only=True)
class InWarpConversion(ConversionPlan):
    """The data stays in a warp: ``rounds``, one per reduced destination register
    (:class:`~linear_layout.planning.in_warp.Round`), and their select trees."""

    rounds: tuple[Round, ...]
    shuffles: int = 0  # per thread
    selects: int = 0  # per thread
    select_basis: tuple[int, ...] = ()
    reader_basis: tuple[int, ...] = ()
    reader_select: LinearLayout | None = None
    decomposition: WarpDecomposition | None = None  # Triton's factorisation, when it was computed
    shared: ClassVar[None] = None
    packed: ClassVar[None] = None
    matrix: ClassVar[None] = None

    def drawing(self) -> ConversionDrawing:
        return ConversionDrawing(None, self.src, self.dst, self.rounds)


@dataclass(frozen=True, kw_only=True)
class NoopConversion(InWarpConversion):
    """The layouts agree: each destination register is a source register of the same thread."""

    strategy: ClassVar[Strategy] = Strategy.NOOP


@dataclass(frozen=True, kw_only=True)
class RegisterConversion(InWarpConversion):
    """A permutation of each thread's registers (every round reads its own lane)."""

    strategy: ClassVar[Strategy] = Strategy.REGISTER


@dataclass(frozen=True, kw_only=True)
class ShuffleConversion(InWarpConversion):
    """Lanes exchange registers: per round a ``gpu.shuffle`` and select trees."""

    strategy: ClassVar[Strategy] = Strategy.SHUFFLE

    def summary(self) -> str:
        return f"shuffle: {self.shuffles} shuffles, {self.selects} selects per thread"


# ------------------------------------------------------------------ through shared memory


def _shared_costs(shared: SharedPlan) -> ExchangeCosts:
    return ExchangeCosts(
        shared.scratch_bytes,
        shared.barriers,
        shared.store.bank_conflicts + shared.load.bank_conflicts,
        shared.store.wavefronts,
        shared.load.wavefronts,
        shared.index_ops,
    )


def _shared_summary(shared: SharedPlan) -> str:
    s = shared
    return (
        f"shared: {s.scratch_bytes} B scratch, {s.num_reps} rep(s), {s.barriers} barrier(s); "
        f"store {len(s.store.instructions)} x {s.store.instruction_bytes} B "
        f"({s.store.wavefronts} wavefronts, ideal {s.store.ideal_wavefronts}); "
        f"load {len(s.load.instructions)} x {s.load.instruction_bytes} B "
        f"({s.load.wavefronts} wavefronts, ideal {s.load.ideal_wavefronts}); "
        f"{s.index_ops} index ops"
    )


@dataclass(frozen=True, kw_only=True)
class SharedMemoryConversion(ConversionPlan):
    """Through the kernel's scratch buffer: ``shared`` (:class:`~linear_layout.planning.shared.SharedPlan`)
    is the exchange of vector loads and stores (a matrix plan keeps it for comparison)."""

    shared: SharedPlan
    rounds: ClassVar[tuple[Round, ...]] = ()
    shuffles: ClassVar[int] = 0  # in-warp shuffles (a packed exchange's are ``packed.shuffles``)
    selects: ClassVar[int] = 0

    def costs(self) -> ExchangeCosts:
        return _shared_costs(self.shared)

    def summary(self) -> str:
        return _shared_summary(self.shared)

    def floor_report(self) -> FloorReport:
        return floor_of(self.shared)

    def drawing(self) -> ConversionDrawing:
        return ConversionDrawing(self.shared, self.src, self.dst, ())


@dataclass(frozen=True, kw_only=True)
class SharedConversion(SharedMemoryConversion):
    """Store to shared memory, barrier, load, per repetition (see the module docstring)."""

    strategy: ClassVar[Strategy] = Strategy.SHARED
    packed: ClassVar[None] = None
    matrix: ClassVar[None] = None


@dataclass(frozen=True, kw_only=True)
class PackedConversion(SharedMemoryConversion):
    """Sub-32-bit data: the register transposes ``packed.src_steps`` before the stores and
    ``packed.dst_steps`` after the loads; ``shared`` exchanges the swapped layouts
    ``packed.src``/``packed.dst`` (:mod:`~linear_layout.planning.packed`)."""

    strategy: ClassVar[Strategy] = Strategy.PACKED
    packed: PackedExchange
    matrix: ClassVar[None] = None

    def summary(self) -> str:
        return f"{_shared_summary(self.shared)}; {self.packed.describe()}"

    def drawing(self) -> ConversionDrawing:
        return ConversionDrawing(self.shared, self.packed.src, self.packed.dst, ())


@dataclass(frozen=True, kw_only=True)
class MatrixConversion(SharedMemoryConversion):
    """``ldmatrix``/``stmatrix`` (``matrix``, :mod:`~linear_layout.planning.matrix`) instead of
    ``shared``'s accesses, which the plan keeps for comparison."""

    strategy: ClassVar[Strategy] = Strategy.MATRIX
    matrix: MatrixPlan
    packed: ClassVar[None] = None

    def costs(self) -> ExchangeCosts:
        matrix = self.matrix
        store, load = (matrix.matrix, matrix.other) if matrix.store_side == "matrix" else (matrix.other, matrix.matrix)
        conflicts = matrix.wavefronts - matrix.matrix.ideal_wavefronts - matrix.other.ideal_wavefronts
        return ExchangeCosts(
            matrix.scratch_bytes, matrix.barriers, conflicts, store.wavefronts, load.wavefronts, self.shared.index_ops
        )

    def summary(self) -> str:
        return self.matrix.summary()

    def floor_report(self) -> FloorReport:
        return floor_of(self.matrix)

    def drawing(self) -> ConversionDrawing:
        note = "the plan uses matrix instructions (plan.matrix); drawn: the shared-memory accesses it replaces"
        return ConversionDrawing(self.shared, self.src, self.dst, (), (note,))


#: A conversion plan: one class per :class:`Strategy`.
StrategyPlan = (
    NoopConversion | RegisterConversion | ShuffleConversion | SharedConversion | PackedConversion | MatrixConversion
)


def minimal_conversion(src: LinearLayout, dst: LinearLayout) -> LinearLayout:
    """Triton's ``minimalCvtLayout``: ``dst.invert_and_compose(src)`` with trailing trivial
    ``block``, ``warp``, ``lane`` dimensions quotiented away (register bases already reduced)."""
    cvt = dst.invert_and_compose(src)
    for dim in ("block", "warp", "lane"):
        quotient = cvt.quotient([dim])
        if quotient is None:
            break
        cvt = quotient
    return cvt


@dataclass(frozen=True)
class _Request:
    """A validated planning request (hardware layouts, register-reduced copies, options)."""

    src: LinearLayout
    dst: LinearLayout
    src_reduced: LinearLayout
    dst_reduced: LinearLayout
    bitwidth: int
    max_reps: int | None
    in_warp: bool
    chip: str | None


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _check_arguments(shape: object, bitwidth: object, threads_per_warp: object, max_reps: object, chip: object) -> None:
    """TypeError naming the argument for values of the wrong type (the public boundary)."""

    def wrong(name: str, what: str, value: object) -> TypeError:
        return TypeError(f"plan_conversion: argument '{name}' must be {what}, got {type(value).__name__}")

    if shape is not None and (
        isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence) or not all(_is_int(s) for s in shape)
    ):
        raise wrong("shape", "a sequence of integers or None (the element width is bitwidth=...)", shape)
    for name, value in (("bitwidth", bitwidth), ("threads_per_warp", threads_per_warp)):
        if not _is_int(value):
            raise wrong(name, "an integer", value)
    if max_reps is not None and not _is_int(max_reps):
        raise wrong("max_reps", "an integer or None", max_reps)
    if chip is not None and not isinstance(chip, str):
        raise wrong("chip", "a chip name such as 'sm_90' or None", chip)


#: The most 32-bit registers per thread a layout may hold to be planned: twice what a thread has
#: (broadcast registers included); past it Triton spills, and the per-register search would run for minutes.
MAX_PLANNED_REGISTERS = 2 * MAX_REGISTERS_PER_THREAD + 2


def _validate(src: LinearLayout, dst: LinearLayout, bitwidth: int, threads_per_warp: int | None) -> None:
    if bitwidth < 8 or bitwidth & (bitwidth - 1):
        raise PlannerError(f"bitwidth must be a power of two >= 8, got {bitwidth}")
    if src.out_dims != dst.out_dims:
        raise PlannerError(f"the layouts cover different shapes: {list(src.out_dims)} vs {list(dst.out_dims)}")
    for d in ("lane", "warp", "block"):
        if src.get_in_dim_size(d) != dst.get_in_dim_size(d):
            raise PlannerError(
                f"the layouts use different numbers of {d}s: {src.get_in_dim_size(d)} vs {dst.get_in_dim_size(d)}"
            )
    if threads_per_warp is not None and src.get_in_dim_size("lane") != threads_per_warp:
        raise PlannerError(f"the layouts have {src.get_in_dim_size('lane')} lanes, expected {threads_per_warp}")
    if not src.is_surjective() or not dst.is_surjective():
        raise PlannerError("both layouts must cover the whole tensor")
    for what, layout in (("src", src), ("dst", dst)):
        registers = -(-layout.get_in_dim_size("register") * bitwidth // 32)
        if registers > MAX_PLANNED_REGISTERS:
            raise PlannerError(
                f"{what} needs {registers} 32-bit registers per thread, more than the planner's "
                f"limit of {MAX_PLANNED_REGISTERS} (a thread has {MAX_REGISTERS_PER_THREAD}; Triton "
                "would spill it to local memory)"
            )


def plan_conversion(
    src: LayoutLike,
    dst: LayoutLike,
    shape: Sequence[int] | None = None,
    bitwidth: int = 32,
    *,
    threads_per_warp: int = 32,
    max_reps: int | None = None,
    in_warp: bool = True,
    chip: str | None = None,
) -> StrategyPlan:
    """Plan ``convert_layout`` from ``src`` to ``dst`` (encodings or distributed LinearLayouts).

    ``shape`` is needed for encodings; ``bitwidth`` is the element width in bits (a power of two
    >= 8). ``threads_per_warp``: the lanes both layouts must have.
    ``max_reps`` limits how many common register directions become repetitions of a shared
    exchange (``None``: all, the smallest scratch; ``0``: one round, the fewest barriers).
    ``in_warp=False`` sends conversions that would use warp shuffles to shared memory.
    ``chip`` (``"sm_90"``; None: portable) lets a shared exchange of 8/16/32-bit data use
    ``ldmatrix`` (sm_75+) / ``stmatrix`` (sm_90+): ``plan.matrix`` when that is cheaper and at the
    bandwidth floor, within Triton's scratch for that chip (docs/conversions.md).

    Raises :class:`PlannerError` (a ``ValueError``) when the layouts do not describe the same
    tensor on the same launch, ``TypeError`` when an argument is not a layout.

    >>> from linear_layout.encodings import BlockedLayout as B
    >>> plan_conversion(B((1, 4), (8, 4), (1, 1), (1, 0)), B((1, 4), (16, 2), (1, 1), (1, 0)), (16, 16)).strategy
    'shuffle'
    """
    _check_arguments(shape, bitwidth, threads_per_warp, max_reps, chip)
    require_bool(in_warp, "plan_conversion", "in_warp")
    try:
        matrix_instructions(chip)
    except ValueError as error:
        raise PlannerError(str(error)) from None
    src_ll = as_hardware_layout(src, shape, "src")
    dst_ll = as_hardware_layout(dst, shape, "dst")
    return _plan(
        src_ll,
        dst_ll,
        int(bitwidth),
        int(threads_per_warp),
        None if max_reps is None else int(max_reps),
        bool(in_warp),
        chip,
    )


@functools.lru_cache(maxsize=4096)
def _plan(
    src: LinearLayout,
    dst: LinearLayout,
    bitwidth: int,
    threads_per_warp: int | None,
    max_reps: int | None,
    in_warp: bool,
    chip: str | None = None,
) -> StrategyPlan:
    """The cached planner: plans are immutable; errors are raised, never cached."""
    _validate(src, dst, bitwidth, threads_per_warp)
    request = _Request(
        src,
        dst,
        src.remove_zero_bases_along_dim("register"),
        dst.remove_zero_bases_along_dim("register"),
        bitwidth,
        max_reps,
        in_warp,
        chip,
    )
    cvt = minimal_conversion(request.src_reduced, request.dst_reduced)
    names = cvt.get_in_dim_names()
    if "block" in names or "warp" in names:
        return _shared(
            request, cvt, "data moves between warps", Rejection(Strategy.SHUFFLE, "data moves between warps")
        )
    if "lane" in names:
        return _lane_exchange(request, cvt)
    strategy = Strategy.REGISTER if "register" in names and not cvt.is_trivial_over(["register"]) else Strategy.NOOP
    reason = "registers move within each thread" if strategy == Strategy.REGISTER else "the layouts agree"
    rounds = in_warp_rounds(request.src_reduced, request.dst_reduced, bitwidth)
    if isinstance(rounds, InWarpRefusal) or rounds.shuffles:
        why = rounds.reason if isinstance(rounds, InWarpRefusal) else "the rounds need shuffles"
        return _shared(
            request,
            cvt,
            f"{strategy} conversion without in-warp rounds ({why})",
            Rejection(strategy, f"no in-warp rounds ({why})"),
        )
    return _in_warp(request, cvt, strategy, reason, rounds, None)


def _lane_exchange(request: _Request, cvt: LinearLayout) -> StrategyPlan:
    """Lanes exchange data: shuffles when Triton's criterion holds and the rounds exist."""
    refused = _shuffle_refusal(request, cvt)
    if refused is not None:
        return _shared(request, cvt, f"in-warp exchange too costly ({refused})", Rejection(Strategy.SHUFFLE, refused))
    decomposition = warp_decomposition(request.src_reduced, request.dst_reduced, request.bitwidth)
    rounds = in_warp_rounds(request.src_reduced, request.dst_reduced, request.bitwidth)
    if isinstance(rounds, InWarpRefusal):
        return _shared(
            request,
            cvt,
            f"no in-warp rounds ({rounds.reason})",
            Rejection(Strategy.SHUFFLE, f"no in-warp rounds ({rounds.reason})"),
        )
    mixed = len(decomposition.mixed) if decomposition is not None else 0
    strategy = Strategy.SHUFFLE if rounds.shuffles else Strategy.REGISTER  # every round may read its own lane
    return _in_warp(request, cvt, strategy, f"{mixed} mixed transposition(s)", rounds, decomposition)


def _shuffle_refusal(request: _Request, cvt: LinearLayout) -> str | None:
    """Why Triton's criterion refuses warp shuffles for ``cvt``, or None when it allows them."""
    if not request.in_warp:
        return "in-warp exchange disabled"
    if tuple(cvt.get_out_dim_names()) != ("register", "lane"):
        return "lanes exchange data with warps"
    decomposition = warp_decomposition(request.src_reduced, request.dst_reduced, 32)
    if decomposition is None:
        return "not a bit permutation"
    if len(decomposition.mixed) >= 2:
        return f"{len(decomposition.mixed)} mixed transpositions"
    return None


class _Common(TypedDict):
    """The fields every plan class has (``ConversionPlan``'s), but ``rejected``."""

    reason: str
    src: LinearLayout
    dst: LinearLayout
    conversion: LinearLayout
    bitwidth: int
    src_registers: RegisterMap
    dst_registers: RegisterMap


def _common(request: _Request, cvt: LinearLayout, reason: str) -> _Common:
    """The common fields of a plan for ``request``: its layouts, the conversion, the register maps."""
    return _Common(
        reason=reason,
        src=request.src,
        dst=request.dst,
        conversion=cvt,
        bitwidth=request.bitwidth,
        src_registers=register_maps(request.src),
        dst_registers=register_maps(request.dst),
    )


def _common_of(plan: ConversionPlan) -> _Common:
    """The common fields of ``plan``, for the plan that replaces it."""
    return _Common(
        reason=plan.reason,
        src=plan.src,
        dst=plan.dst,
        conversion=plan.conversion,
        bitwidth=plan.bitwidth,
        src_registers=plan.src_registers,
        dst_registers=plan.dst_registers,
    )


_IN_WARP_CLASSES: dict[Strategy, type[NoopConversion] | type[RegisterConversion] | type[ShuffleConversion]] = {
    Strategy.NOOP: NoopConversion,
    Strategy.REGISTER: RegisterConversion,
    Strategy.SHUFFLE: ShuffleConversion,
}


def _in_warp(
    request: _Request,
    cvt: LinearLayout,
    strategy: Strategy,
    reason: str,
    rounds: InWarpPlan,
    decomposition: WarpDecomposition | None,
) -> NoopConversion | RegisterConversion | ShuffleConversion:
    return _IN_WARP_CLASSES[strategy](
        **_common(request, cvt, reason),
        decomposition=decomposition,
        rounds=rounds.rounds,
        shuffles=rounds.shuffles,
        selects=rounds.selects,
        select_basis=rounds.select_basis,
        reader_basis=rounds.reader_basis,
        reader_select=rounds.reader_select,
    )


def _shared(request: _Request, cvt: LinearLayout, reason: str, in_warp: Rejection) -> StrategyPlan:
    """Through shared memory: the matrix plan when the chip has one that is cheaper, else the
    packed exchange when it is cheaper, else the plain exchange; ``in_warp`` says why the data
    cannot stay in a warp."""
    shared = SharedConversion(
        **_common(request, cvt, reason),
        shared=plan_shared(request.src, request.dst, request.bitwidth, request.max_reps),
        rejected=(in_warp,),
    )
    matrix = _matrix(request, shared)
    if isinstance(matrix, MatrixConversion):
        return matrix
    return _packed(request, shared, (in_warp, *matrix))


def _matrix(request: _Request, plan: SharedConversion) -> MatrixConversion | tuple[Rejection, ...]:
    """The matrix plan replacing ``plan`` when the chip has ldmatrix/stmatrix, else why not
    (nothing when the chip has neither: then it was no alternative)."""
    available = matrix_instructions(request.chip)
    if not available:
        return ()
    if request.max_reps is not None:
        return (Rejection(Strategy.MATRIX, "max_reps fixes the repetitions of the exchange"),)
    ldmatrix, stmatrix = "ldmatrix" in available, "stmatrix" in available
    bound = triton_scratch_bytes(request.src, request.dst, request.bitwidth, ldmatrix=ldmatrix, stmatrix=stmatrix)
    matrix = choose_matrix_plan(request.src, request.dst, request.bitwidth, plan.shared, request.chip, bound)
    if isinstance(matrix, str):
        return (Rejection(Strategy.MATRIX, matrix),)
    shared = plan.shared
    rejected = Rejection(
        Strategy.SHARED,
        f"{shared.store.wavefronts + shared.load.wavefronts} wavefronts and "
        f"{len(shared.store.instructions) + len(shared.load.instructions)} shared instructions against the "
        f"matrix plan's {matrix.wavefronts} and {matrix.shared_instructions}",
    )
    return MatrixConversion(
        **_common_of(plan),
        shared=shared,
        matrix=matrix,
        rejected=(*plan.rejected, rejected),
    )


def _packed(request: _Request, plan: SharedConversion, rejected: tuple[Rejection, ...]) -> StrategyPlan:
    """The packed sub-32-bit exchange when the ordinary plan is above the floor and a word
    exists (planning/packed.py); else ``plan`` with why not (nothing for 32-bit data or wider:
    then packing was no alternative)."""
    if request.bitwidth >= 32:
        return _with_rejections(plan, rejected)
    bound = triton_scratch_bytes(request.src, request.dst, request.bitwidth)
    packed = plan_packed(request.src, request.dst, request.bitwidth, request.max_reps, plan.shared, bound)
    if packed is None:
        return _with_rejections(plan, (*rejected, Rejection(Strategy.PACKED, NOTHING_TO_PACK)))
    if isinstance(packed, str):  # the narrow plan stays, and the rejection says why
        return _with_rejections(plan, (*rejected, Rejection(Strategy.PACKED, packed.removeprefix("not packed: "))))
    exchange, shared = packed
    narrow = floor_of(plan.shared)
    return PackedConversion(
        **_common_of(plan),
        shared=shared,
        packed=exchange,
        rejected=(
            *rejected,
            Rejection(
                Strategy.SHARED,
                f"{narrow.wavefronts} wavefronts, above the floor {narrow.floor}: {'; '.join(narrow.reasons)}",
            ),
        ),
    )


def _with_rejections(plan: SharedConversion, rejected: tuple[Rejection, ...]) -> SharedConversion:
    return plan if plan.rejected == rejected else dataclasses.replace(plan, rejected=rejected)
