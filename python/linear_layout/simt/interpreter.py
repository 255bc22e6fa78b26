r"""A numpy interpreter for lowered SIMT kernels: runs a ``gpu.func`` for one block, in lockstep.

Lowerings are proven by running them. :func:`run_kernel` executes the per-thread program that the
lowering passes emit -- a ``gpu.func ... kernel`` written only in upstream dialects -- for every
thread of one block at once, and reports what the hardware would have paid in shared-memory
wavefronts, shuffles and barriers.

Execution model
===============
* **One launch, one block, lockstep.** The block has ``num_warps * threads_per_warp`` threads along
  ``x`` (``gpu.thread_id y/z`` are 0, ``gpu.block_dim y/z`` are 1). Every op is executed once for
  all threads, in program order, so all warps advance together.
* **Vectorised across threads.** Every SSA value is a numpy array whose leading axis is the
  thread: a scalar is shape ``(threads,)``, a ``vector<R x T>`` is ``(threads, R)`` and a
  ``vector<A x B x T>`` is ``(threads, A, B)``. Memrefs are the exception: they are uniform
  :class:`Buffer` objects shared by all threads.
* **Element types.** Integers (``i1`` .. ``i64``, ``index`` = 64 bits) are stored as *unsigned*
  bit patterns in the smallest numpy container that holds them and wrap modulo ``2**width`` after
  every op; signed ops reinterpret the bits. ``f16``/``f32``/``f64`` use the numpy type of the same
  name. ``bf16`` is stored as ``float32`` rounded to bf16 (nearest-even) after every op; a
  ``memref<..xbf16>`` argument is a ``float32`` numpy array.
* **Control flow.** ``scf.if`` and ``scf.for`` run under an *active-thread mask*. A branch or an
  iteration runs once for the threads that take it; memory ops and error checks ignore inactive
  threads, and results are merged with ``where``. A uniform branch therefore runs exactly like the
  hardware would; a divergent one runs both sides.
* **Memory.** Global memref arguments are the caller's numpy arrays, read and written in place.
  Workgroup memory (``gpu.func`` ``workgroup(...)`` attributions and ``memref.alloc`` in
  ``#gpu.address_space<workgroup>``) is fresh per block and starts as garbage (NaN, or the byte
  pattern 0xA5): reading an element no thread has written raises :class:`MemoryAccessError`.
  Out-of-bounds indices and accesses that break a promised ``alignment`` raise too.
* **Undefined behaviour is an error, poison is garbage.** Division by zero, shifts by the bit
  width or more, and a barrier or shuffle reached in divergent control flow raise
  :class:`UndefinedBehaviorError`. Poison *values* (an invalid shuffle lane, a ``-1`` shuffle mask
  entry) are filled with the garbage pattern so that using them shows up in the results.
  ``fptosi``/``fptoui`` saturate (NaN gives 0), as PTX's ``cvt.rzi`` does.
* **Closed op set.** Exactly the ops in :data:`SUPPORTED_OPS` run; any other op raises
  :class:`UnsupportedOp` naming it:

  - ``arith``: constant (scalar and dense vector), addi subi muli divui divsi remui remsi andi
    ori xori shli shrui shrsi maxui minui maxsi minsi cmpi select, index_cast index_castui trunci
    extui extsi bitcast, addf subf mulf divf remf maximumf minimumf maxnumf minnumf negf cmpf,
    sitofp uitofp fptosi fptoui truncf extf;
  - ``math``: absf absi ceil floor exp exp2 log log2 sqrt rsqrt tanh sin cos fma;
  - ``vector``: load store extract insert (static or dynamic positions) broadcast shuffle
    from_elements bitcast (MLIR 22 has no ``vector.splat``: use broadcast);
  - ``memref``: load store, alloc (workgroup memory only), extract_aligned_pointer_as_index
    (workgroup memory only: the buffer's byte address), view (of ``gpu.dynamic_shared_memory``
    only, at a uniform byte shift, to a static shape);
  - ``llvm``: inttoptr (to ``!llvm.ptr<3>``) ptrtoint getelementptr (one index into a scalar
    type) extractvalue (one position) bitcast;
  - ``nvvm``: ldmatrix stmatrix (``m8n8`` ``b16``, ``num`` 1/2/4, row or col layout);
  - ``gpu``: thread_id block_id block_dim grid_dim lane_id barrier shuffle (xor/up/down/idx,
    returning the value and the valid flag) dynamic_shared_memory return;
  - ``scf``: for (iter_args, signed or ``unsigned`` compare) if yield; ``func.return``.

  A ``gpu.shuffle`` lane whose source is outside ``[0, width)``, or whose own lane is, gets
  ``valid = false`` and a poison (garbage) value. Integer overflow flags (nsw/nuw) are ignored:
  results wrap.

Shared-memory bank model (NVIDIA, 32 banks x 4 bytes)
=====================================================
Each warp's access is accounted separately, per op execution (:class:`SharedAccess`).

1. **Split into hardware instructions.** A thread's access of ``n`` contiguous bytes (one
   ``vector`` row, or one scalar) is issued as instructions of ``w`` bytes: the largest power of
   two that is at most 16, at most the op's ``alignment`` attribute (the element size when there
   is none -- without it LLVM scalarises the access) and divides ``n``. A ``vector<8xf32>`` load
   with ``{alignment = 16}`` is two 128-bit instructions; without the attribute it is eight
   32-bit ones. (This matches the PTX of the stock ``gpu-lower-to-nvvm-pipeline``.)
2. **Phases.** An instruction is served in phases of ``128 / max(w, 4)`` threads: the whole warp
   for accesses of up to 32 bits, half-warps for 64-bit and quarter-warps for 128-bit accesses.
3. **Wavefronts.** Byte address ``a`` lies in 4-byte word ``a // 4`` and bank ``word % 32``. A
   phase costs ``max over banks of the number of distinct words it touches in that bank``
   (threads touching the same word share it: broadcast); a phase with no active thread costs 0.
4. **Ideal.** The conflict-free minimum of a phase is ``ceil(distinct words / 32)``;
   ``bank_conflicts = wavefronts - ideal_wavefronts``. This is the *per-access minimum*: it
   depends on the access width the kernel chose (a 2-byte access of 32 lanes moves 64 bytes in
   one wavefront).
5. **Bytes and the floor.** Each warp access also records the distinct bytes it moved
   (:attr:`SharedAccess.bytes`). A wavefront serves at most 128 bytes, so no kernel moving the
   same data can use fewer than the *bandwidth floor*
   ``ceil(stored bytes / 128) + ceil(loaded bytes / 128)`` (:attr:`Report.floor_wavefronts`),
   whatever its access widths or instructions.

Matrix instructions (PTX ISA ``ldmatrix``/``stmatrix .m8n8 .b16``)
===================================================================
A pointer is a per-thread byte address (``uint64``); workgroup buffers are laid out from address 0
in order of creation, each 128-byte aligned. ``nvvm.ldmatrix``/``nvvm.stmatrix`` with ``num``
matrices of 8x8 16-bit elements:

* lane ``8 i + r`` supplies the address of row ``r`` (16 contiguous, 16-byte aligned bytes) of
  matrix ``i``; lanes ``>= 8 num`` supply nothing (their operand is ignored);
* register ``i`` (a 32-bit word) of lane ``L`` holds row ``L / 4``, columns ``2 (L % 4)`` (low
  half) and ``2 (L % 4) + 1`` (high half) of matrix ``i``; with ``layout = col`` (``.trans``)
  the fragment is of the transposed matrix: rows ``2 (L % 4)``, ``2 (L % 4) + 1`` of column ``L / 4``;
* the whole warp must execute it (``.sync.aligned``): divergence raises;
* the rows of a matrix are served as one phase (8 addresses x 16 bytes, like a quarter-warp
  128-bit access): a matrix costs the maximum over banks of the distinct words its rows touch,
  one wavefront when conflict-free. ``bytes_per_thread`` is ``4 num`` and ``instruction_bytes`` 16.
  (A public Nsight measurement suggests the hardware can also merge the rows of different
  matrices of one instruction; on conflict-free accesses, the only ones the lowering emits, the
  two models agree.)

Every workgroup buffer is placed at a 128-byte-aligned address, so banks are counted from each
buffer's start. Dynamic shared memory (``gpu.dynamic_shared_memory``) starts after the static
buffers, 128-byte aligned; each ``memref.view`` of it is a workgroup buffer at its byte shift
(a view at a shift that is not a multiple of 128 keeps its exact address). Two views of the same
shift and type are one buffer; views that overlap otherwise are not supported (they would alias
on the hardware). Global accesses are counted as instructions and distinct 32-byte sectors per warp
(:class:`GlobalAccess`), with the same instruction split; each global argument starts at a
sector-aligned address.

Race detection
==============
Lockstep execution would hide a missing ``gpu.barrier``, so every workgroup element remembers
which warps wrote it and which read it since the last barrier (a barrier clears that state). In
one barrier interval it is a race when

* **read-after-write**: a warp reads an element that another warp wrote, and it did not write
  the element itself;
* **write-after-read**: a warp writes an element that another warp read;
* **write-after-write**: a warp writes an element that another warp wrote, with a different
  value, or threads of one store write different values to one element. Equal values are benign:
  that is how broadcast layouts store their duplicates.

Within one warp, a later op always sees an earlier one (the warp runs in lockstep), so only pairs
of different warps race. With ``on_race="raise"`` (the default) the first race raises
:class:`RaceError` (its ``race`` attribute is the :class:`Race`); with ``on_race="record"`` races are collected in :attr:`Report.races` and
execution goes on.
"""

from __future__ import annotations

import ast
import collections
import contextlib
import dataclasses
import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

import mlir.ir as ir

from ..core.hardware import BANK_BYTES, NUM_BANKS, WAVEFRONT_BYTES, lane_phases

__all__ = [
    "Buffer",
    "GlobalAccess",
    "MemoryAccessError",
    "Race",
    "RaceError",
    "Report",
    "SharedAccess",
    "SimtError",
    "SUPPORTED_OPS",
    "UndefinedBehaviorError",
    "UnsupportedOp",
    "run_kernel",
]

SHARED_BASE_ALIGNMENT = 128
SECTOR_BYTES = 32
MAX_INSTRUCTION_BYTES = 16
MATRIX_ROW_BYTES = 16  # one row of an 8x8 b16 matrix (ldmatrix/stmatrix)
_GEP_DYNAMIC_INDEX = -(2**31)  # llvm.getelementptr rawConstantIndices entry meaning "dynamic"
_DYNAMIC_POSITION = -(2**63)  # ShapedType::kDynamic in vector.extract/insert static positions
_POISON_INDEX = -1  # vector.shuffle mask entry meaning "poison"
_GARBAGE_BYTE = 0xA5


# --------------------------------------------------------------------------------------------
# Errors


class SimtError(Exception):
    """Base class of every error raised while interpreting a kernel."""

    located = False  # True once the message names the op and location that failed


class UnsupportedOp(SimtError):
    """The kernel uses an op (or a type or attribute form) outside the interpreter's closed set."""


class MemoryAccessError(SimtError):
    """An out-of-bounds, misaligned or uninitialised memory access, or a bad argument buffer."""


class UndefinedBehaviorError(SimtError):
    """The kernel would have undefined behaviour: division by zero, oversized shift, divergent
    barrier or shuffle, out-of-range dynamic vector position, ..."""


class RaceError(SimtError):
    """Two warps touched the same workgroup element in one barrier interval (see module doc)."""

    race: Race | None = None  # the race found, set by the interpreter when it raises


# --------------------------------------------------------------------------------------------
# Element types


@dataclasses.dataclass(frozen=True)
class Elem:
    """How one MLIR element type is held in numpy."""

    name: str
    is_float: bool
    width: int  # bits of the MLIR type
    storage: np.dtype  # numpy dtype that holds one value
    mem_bytes: int  # bytes one element occupies in memory (i1 takes a byte)

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    @property
    def is_bf16(self) -> bool:
        return self.name == "bf16"

    @property
    def bits_dtype(self) -> np.dtype:
        """Unsigned dtype of the in-memory bit pattern (bf16 -> uint16)."""
        return np.dtype(f"uint{8 * self.mem_bytes}")

    def wrap(self, x) -> np.ndarray:
        """Coerce ``x`` to this type's storage: wrap integers, round floats."""
        if self.is_float:
            out = np.asarray(x).astype(self.storage)
            return _round_to_bf16(out) if self.is_bf16 else out
        out = np.asarray(x)
        if out.dtype.kind == "f":
            raise TypeError("internal: integer wrap of a float array")
        out = out.astype(self.storage)
        if self.width != 8 * self.storage.itemsize:  # i1, i4, i24, ...: clear the spare bits
            out = out & self.storage.type(self.mask)
        return out

    def signed(self, x: np.ndarray) -> np.ndarray:
        """Two's-complement value of the stored bits, as int64."""
        v = np.asarray(x)
        if self.width == 64:
            return v.view(np.int64)
        v = v.astype(np.int64)
        sign = np.int64(1 << (self.width - 1))
        return (v ^ sign) - sign

    def unsigned(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x).astype(np.uint64)

    def to_bits(self, x: np.ndarray) -> np.ndarray:
        """The in-memory bit pattern, as ``bits_dtype``."""
        x = np.ascontiguousarray(x)
        if self.is_bf16:
            return (x.view(np.uint32) >> np.uint32(16)).astype(np.uint16)
        if self.is_float:
            return x.view(self.bits_dtype)
        return x.astype(self.bits_dtype)

    def from_bits(self, bits: np.ndarray) -> np.ndarray:
        bits = np.ascontiguousarray(bits).astype(self.bits_dtype)
        if self.is_bf16:
            return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)
        if self.is_float:
            return bits.view(self.storage)
        return self.wrap(bits)

    def garbage(self, shape) -> np.ndarray:
        """The pattern used for uninitialised memory and poison values."""
        if self.is_float:
            return np.full(shape, np.nan, dtype=self.storage)
        pattern = int.from_bytes(bytes([_GARBAGE_BYTE]) * 8, "little") & self.mask
        return np.full(shape, pattern, dtype=self.storage)


_INDEX = Elem("index", False, 64, np.dtype(np.uint64), 8)
_FLOATS = (
    (ir.F16Type, Elem("f16", True, 16, np.dtype(np.float16), 2)),
    (ir.BF16Type, Elem("bf16", True, 16, np.dtype(np.float32), 2)),  # bf16 values held in float32
    (ir.F32Type, Elem("f32", True, 32, np.dtype(np.float32), 4)),
    (ir.F64Type, Elem("f64", True, 64, np.dtype(np.float64), 8)),
)


@functools.cache
def _integer_elem(width: int) -> Elem:
    if not 1 <= width <= 64:
        raise UnsupportedOp(f"integer type i{width} is wider than 64 bits")
    container = max(8, 1 << (width - 1).bit_length())
    return Elem(f"i{width}", False, width, np.dtype(f"uint{container}"), container // 8)


def _elem(t: ir.Type) -> Elem:
    """The :class:`Elem` of a scalar type, or of the element type of a vector/memref type."""
    if isinstance(t, (ir.VectorType, ir.MemRefType)):
        t = t.element_type
    if isinstance(t, ir.IntegerType):
        return _integer_elem(t.width)
    if isinstance(t, ir.IndexType):
        return _INDEX
    for type_class, elem in _FLOATS:
        if isinstance(t, type_class):
            return elem
    raise UnsupportedOp(f"element type {t} is not supported (use i1..i64, index, f16, bf16, f32, f64)")


def _round_to_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bf16 (ties to even), keeping float32 storage."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    quiet_nan = (bits & np.uint32(0xFFFF0000)) | np.uint32(0x00400000)
    return np.where(np.isnan(x), quiet_nan, rounded).astype(np.uint32).view(np.float32)


def _vector_shape(t: ir.Type) -> tuple[int, ...]:
    """Per-thread shape of a value of type ``t``: () for scalars and 0-d vectors."""
    if isinstance(t, ir.VectorType):
        if any(t.scalable_dims):
            raise UnsupportedOp(f"scalable vector type {t} is not supported")
        return tuple(t.shape)
    return ()


# --------------------------------------------------------------------------------------------
# Memory


@dataclasses.dataclass(frozen=True, eq=False)
class RaceTracking:
    """Race tracking of one workgroup buffer: per element, bit w set if warp w wrote / read it
    since the last barrier; ``initialized`` is set once any thread has written the element.
    The arrays are updated in place (the tracking is per-buffer scratch state, never cached)."""

    writers: np.ndarray
    readers: np.ndarray
    initialized: np.ndarray

    @classmethod
    def of_size(cls, size: int) -> RaceTracking:
        return cls(np.zeros(size, np.uint64), np.zeros(size, np.uint64), np.zeros(size, bool))


@dataclasses.dataclass(eq=False)
class Buffer:
    """A memref: a flat numpy array plus the strided indexing of its MLIR type."""

    name: str
    space: str  # "global" or "workgroup"
    elem: Elem
    data: np.ndarray  # flat, in elem.storage; global buffers are views of the caller's arrays
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    base_address: int
    tracking: RaceTracking | None = None  # workgroup buffers only

    def start_interval(self) -> None:
        if self.tracking is not None:
            self.tracking.writers[:] = 0
            self.tracking.readers[:] = 0

    def race_tracking(self) -> RaceTracking:
        """The race tracking of a workgroup buffer."""
        if self.tracking is None:
            raise SimtError(f"{self.name} is {self.space} memory: no race tracking")
        return self.tracking

    def multi_index(self, flat: int) -> tuple[int, ...]:
        """Indices of a flat element offset, for messages."""
        rest = flat - self.offset
        out = []
        for stride in self.strides:
            out.append(rest // stride if stride else 0)
            rest -= out[-1] * stride
        return tuple(out)


def _memref_layout(t: ir.MemRefType, shape: Sequence[int]) -> tuple[tuple[int, ...], int]:
    """(strides, offset) of a memref type, for a static shape (dynamic sizes come from the array)."""
    if isinstance(t.layout, ir.AffineMapAttr) and t.layout.value == ir.AffineMap.get_identity(t.rank):
        strides, running = [], 1
        for size in reversed(shape):
            strides.append(running)
            running *= size
        return tuple(reversed(strides)), 0
    strides, offset = t.get_strides_and_offset()
    if ir.ShapedType.get_dynamic_stride_or_offset() in (*strides, offset):
        raise UnsupportedOp(f"memref type {t} has a dynamic strided layout")
    return tuple(strides), offset


def _memory_space(t: ir.MemRefType) -> str:
    space = t.memory_space
    if space is None:
        return "global"
    text = str(space)
    if text in ("#gpu.address_space<workgroup>", "3 : i64", "3 : i32", "3"):
        return "workgroup"
    if text in ("#gpu.address_space<global>", "1 : i64", "1 : i32", "1"):
        return "global"
    raise UnsupportedOp(f"memref memory space {text} is not supported (global and workgroup only)")


def _instruction_bytes(row_bytes: int, elem_bytes: int, alignment: int | None) -> int:
    """Width of the hardware instructions a contiguous per-thread access is split into."""
    limit = min(MAX_INSTRUCTION_BYTES, alignment if alignment else elem_bytes)
    width = elem_bytes
    while width * 2 <= limit and row_bytes % (width * 2) == 0:
        width *= 2
    return width


# --------------------------------------------------------------------------------------------
# Report


@dataclasses.dataclass(frozen=True)
class MemoryAccess:
    """What every access record holds: one warp's execution of one load or store."""

    op: str
    location: str
    kind: str  # "load" or "store"
    buffer: str
    block: int
    warp: int
    bytes_per_thread: int
    instruction_bytes: int
    instructions: int


@dataclasses.dataclass(frozen=True)
class SharedAccess(MemoryAccess):
    """One warp's execution of one workgroup-memory load or store."""

    wavefronts: int
    ideal_wavefronts: int
    bytes: int  # distinct bytes of the buffer this warp's active threads moved

    @property
    def bank_conflicts(self) -> int:
        return self.wavefronts - self.ideal_wavefronts


@dataclasses.dataclass(frozen=True)
class GlobalAccess(MemoryAccess):
    """One warp's execution of one global-memory load or store."""

    sectors: int  # distinct 32-byte sectors touched, summed over the instructions


@dataclasses.dataclass(frozen=True)
class Race:
    kind: str  # "read-after-write", "write-after-read" or "write-after-write"
    buffer: str
    element: tuple[int, ...]
    warp: int
    other_warps: tuple[int, ...]
    op: str
    location: str
    block: int
    interval: int  # barrier intervals are numbered from 0 in each block
    elements: int  # number of racing element accesses in this op execution

    def __str__(self) -> str:
        verb = "reads" if self.kind == "read-after-write" else "writes"
        what = "written" if self.kind != "write-after-read" else "read"
        others = ", ".join(map(str, self.other_warps))
        return (
            f"{self.kind} race on workgroup buffer {self.buffer} element {list(self.element)}: "
            f"warp {self.warp} {verb} it ({self.op} at {self.location}) after warp(s) {others} "
            f"{what} it in the same barrier interval #{self.interval} of block {self.block} "
            f"({self.elements} racing element access(es)); a gpu.barrier is missing"
        )


@dataclasses.dataclass
class Report:
    """What one :func:`run_kernel` call did. Counts are summed over the blocks that ran."""

    num_warps: int
    threads_per_warp: int
    blocks: list[tuple[int, int, int]]
    args: list[Any]  # the arguments as passed (global arrays were updated in place)
    shared_accesses: list[SharedAccess] = dataclasses.field(default_factory=list)
    global_accesses: list[GlobalAccess] = dataclasses.field(default_factory=list)
    shuffles: int = 0  # warp-level 32-bit shuffle instructions
    barriers: int = 0  # gpu.barrier executions (per block, not per warp)
    races: list[Race] = dataclasses.field(default_factory=list)
    op_counts: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    # The workgroup buffers of every block as the kernel left them (placement checks read their bytes).
    workgroup_buffers: list[Buffer] = dataclasses.field(default_factory=list)

    @property
    def wavefronts(self) -> int:
        return sum(a.wavefronts for a in self.shared_accesses)

    @property
    def ideal_wavefronts(self) -> int:
        return sum(a.ideal_wavefronts for a in self.shared_accesses)

    @property
    def bank_conflicts(self) -> int:
        return self.wavefronts - self.ideal_wavefronts

    def shared_bytes(self, kind: str | None = None) -> int:
        """Distinct bytes moved through workgroup memory, summed over warp accesses; ``kind``
        (``"load"`` or ``"store"``) restricts the sum to one side."""
        return sum(a.bytes for a in self.shared_accesses if kind in (None, a.kind))

    @property
    def floor_wavefronts(self) -> int:
        """The bandwidth floor: ``ceil(stored bytes / 128) + ceil(loaded bytes / 128)``."""
        return sum(-(-self.shared_bytes(kind) // WAVEFRONT_BYTES) for kind in ("store", "load"))

    def shared_by_op(self) -> dict[tuple[str, str, str], tuple[int, int]]:
        """(op, location, kind) -> (wavefronts, ideal wavefronts), summed over warps and executions."""
        out: dict[tuple[str, str, str], tuple[int, int]] = {}
        for a in self.shared_accesses:
            key = (a.op, a.location, a.kind)
            w, i = out.get(key, (0, 0))
            out[key] = (w + a.wavefronts, i + a.ideal_wavefronts)
        return out

    def summary(self) -> str:
        lines = [
            f"blocks={len(self.blocks)} warps={self.num_warps}x{self.threads_per_warp} "
            f"barriers={self.barriers} shuffles={self.shuffles} races={len(self.races)}",
            f"shared: wavefronts={self.wavefronts} ideal={self.ideal_wavefronts} "
            f"bank_conflicts={self.bank_conflicts} bytes={self.shared_bytes()} floor={self.floor_wavefronts}",
        ]
        for (op, loc, kind), (w, i) in self.shared_by_op().items():
            lines.append(f"  {kind:5} {op:14} {loc}: wavefronts={w} ideal={i}")
        return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The interpreter


@dataclasses.dataclass(frozen=True)
class _Launch:
    """What every block of one ``run_kernel`` call shares: the block's shape, the grid, and the
    policies (``on_race``, ``check_uninitialized``)."""

    num_warps: int
    threads_per_warp: int
    grid: tuple[int, int, int]
    on_race: str
    check_uninitialized: bool

    @property
    def num_threads(self) -> int:
        return self.num_warps * self.threads_per_warp


class _Executor:
    """Executes one block (``block_id``) of the launch. Handlers in ``_HANDLERS`` receive it and the op."""

    def __init__(self, launch: _Launch, block_id: tuple[int, int, int], report: Report) -> None:
        self.launch = launch
        self.block_id = block_id
        self.report = report
        self.num_threads = launch.num_threads
        self.tid = np.arange(self.num_threads, dtype=np.uint64)
        self.warp_of_thread = np.arange(self.num_threads) // launch.threads_per_warp
        self.lane_of_thread = np.arange(self.num_threads) % launch.threads_per_warp
        self.active = np.ones(self.num_threads, dtype=bool)
        self.env: dict[ir.Value, Any] = {}
        self.shared: list[Buffer] = []
        self.shared_top = 0  # next free workgroup address
        self.dynamic_base: int | None = None  # where dynamic shared memory starts, once used
        self.dynamic_views: dict[tuple[int, str], Buffer] = {}
        self.interval = 0

    # ---- values

    def get(self, value: ir.Value):
        try:
            return self.env[value]
        except KeyError:
            raise SimtError(f"internal: value {value.get_name()} used before definition") from None

    def operands(self, op) -> list:
        return [self.get(v) for v in op.operands]

    def uniform(self, array: np.ndarray, what: str) -> int:
        """The value of a per-thread scalar that must be the same for all active threads."""
        values = np.unique(array[self.active])
        if len(values) != 1:
            raise UndefinedBehaviorError(f"{what} must be uniform across threads, got {values[:8].tolist()}")
        return int(values[0])

    def active_like(self, array: np.ndarray) -> np.ndarray:
        """The active mask, broadcastable against a per-thread array of any rank."""
        return self.active.reshape((-1,) + (1,) * (np.ndim(array) - 1))

    def require_all_active(self, what: str) -> None:
        if not self.active.all():
            raise UndefinedBehaviorError(
                f"{what} reached by only {int(self.active.sum())} of {self.num_threads} threads "
                "(divergent control flow)"
            )

    # ---- blocks and regions

    def run_block(self, block: ir.Block, args: Sequence = ()) -> list:
        """Run ``block`` with its arguments bound to ``args``; return the terminator's operands."""
        for arg, value in zip(block.arguments, args, strict=True):
            self.env[arg] = value
        for op in block.operations:
            op = op.operation
            name = op.name
            if name in _TERMINATORS:
                return self.operands(op)
            handler = _HANDLERS.get(name)
            if handler is None:
                error = UnsupportedOp(
                    f"op '{name}' at {_location(op)} is not supported by the SIMT interpreter "
                    "(see linear_layout.simt.SUPPORTED_OPS)"
                )
                error.located = True
                raise error
            self.report.op_counts[name] += 1
            try:
                results = handler(self, op)
            except SimtError as error:
                if error.located:  # raised by an op nested in this one's regions
                    raise
                located = type(error)(f"{name} at {_location(op)}: {error}")
                located.located = True
                raise located from None
            except Exception as error:  # an interpreter bug: still say which op triggered it
                located = SimtError(f"internal error executing {name} at {_location(op)}: {error!r}")
                located.located = True
                raise located from error
            for result, value in zip(op.results, results or (), strict=True):
                self.env[result] = value
        raise SimtError("internal: block without terminator")

    def run_masked(self, region: ir.Region, mask: np.ndarray, args: Sequence = ()) -> list:
        saved = self.active
        self.active = mask
        try:
            return self.run_block(region.blocks[0], args)
        finally:
            self.active = saved

    # ---- memory

    def new_shared(self, name: str, t: ir.MemRefType, address: int | None = None) -> Buffer:
        """A fresh workgroup buffer of type ``t`` at the next free 128-byte-aligned address, or at
        ``address`` (a view of dynamic shared memory)."""
        if not t.has_static_shape:
            raise UnsupportedOp(f"workgroup memref {t} must have a static shape")
        elem = _elem(t)
        shape = tuple(t.shape)
        strides, offset = _memref_layout(t, shape)
        size = offset + sum((d - 1) * s for d, s in zip(shape, strides)) + 1 if all(shape) else 0
        aligned_top = -(-self.shared_top // SHARED_BASE_ALIGNMENT) * SHARED_BASE_ALIGNMENT
        base = aligned_top if address is None else address
        self.shared_top = max(self.shared_top, base + size * elem.mem_bytes)
        buf = Buffer(
            name,
            "workgroup",
            elem,
            elem.garbage(size),
            shape,
            strides,
            offset,
            base,
            tracking=RaceTracking.of_size(size),
        )
        self.shared.append(buf)
        return buf

    def element_offsets(self, buf: Buffer, indices: list[np.ndarray], vshape: tuple[int, ...]) -> np.ndarray:
        """Flat element offsets, shape (threads, *vshape), of an access at ``indices`` whose
        vector covers the trailing ``len(vshape)`` dimensions; raises if out of bounds."""
        if len(indices) != len(buf.shape):
            raise UndefinedBehaviorError(f"{len(indices)} indices for rank-{len(buf.shape)} memref")
        if len(vshape) > len(buf.shape):
            raise UnsupportedOp(f"vector of rank {len(vshape)} accessed in a rank-{len(buf.shape)} memref")
        lead = len(buf.shape) - len(vshape)
        flat = np.full(self.num_threads, buf.offset, dtype=np.int64)
        extent = (1,) * lead + vshape
        for dim, (index, size, stride, count) in enumerate(zip(indices, buf.shape, buf.strides, extent)):
            index = index.astype(np.uint64)  # negative indices become huge: caught below
            bad = self.active & ((index > np.uint64(size - count)) if count <= size else True)
            if bad.any():
                t = int(np.argmax(bad))
                vector = f" with a vector of {count}" if count > 1 else ""
                raise MemoryAccessError(
                    f"out-of-bounds access to {buf.name} (shape {list(buf.shape)}): thread {t} "
                    f"index {int(index.view(np.int64)[t])} in dimension {dim}{vector}"
                )
            flat = flat + np.where(self.active, index, 0).astype(np.int64) * stride
        flat = flat.reshape((self.num_threads,) + (1,) * len(vshape))
        for k, count in enumerate(vshape):
            axis_shape = [1] * len(vshape)
            axis_shape[k] = count
            flat = flat + (np.arange(count) * buf.strides[lead + k]).reshape(axis_shape)
        return flat

    def access(self, op, kind: str, buf: Buffer, indices, vshape, value=None):
        """Perform a load (returns the value) or a store of ``value`` through ``buf``."""
        offsets = self.element_offsets(buf, indices, vshape)
        alignment = None
        if "alignment" in op.attributes:
            alignment = op.attributes["alignment"].value
        self.account(op, kind, buf, offsets, vshape, alignment)
        active = self.active
        if kind == "load":
            if buf.space == "workgroup":
                self.track_read(op, buf, offsets[active])
            return buf.data[np.where(active.reshape((-1,) + (1,) * len(vshape)), offsets, buf.offset)]
        value = buf.elem.wrap(np.broadcast_to(value, offsets.shape))
        if buf.space == "workgroup":
            self.track_write(op, buf, offsets[active], value[active])
        buf.data[offsets[active]] = value[active]
        return None

    def account(self, op, kind, buf: Buffer, offsets, vshape, alignment) -> None:
        """Record wavefronts (shared) or sectors (global) of this access, per warp."""
        elem_bytes = buf.elem.mem_bytes
        row = vshape[-1] if vshape else 1
        row_bytes = row * elem_bytes
        width = _instruction_bytes(row_bytes, elem_bytes, alignment)
        per_instr = width // elem_bytes
        active = self.active
        rows = offsets.reshape(self.num_threads, -1, row)
        # byte address of each instruction of each thread: (threads, instructions)
        addresses = buf.base_address + rows[:, :, ::per_instr].reshape(self.num_threads, -1) * elem_bytes
        if alignment:  # the attribute promises that each row starts at a multiple of it
            row_starts = buf.base_address + rows[:, :, 0] * elem_bytes
            misaligned = active[:, None] & (row_starts % alignment != 0)
            if misaligned.any():
                t, i = np.argwhere(misaligned)[0]
                raise MemoryAccessError(
                    f"{op.name} promises alignment {alignment} but thread {t} accesses byte "
                    f"{int(row_starts[t, i] - buf.base_address)} of {buf.name}"
                )
        num_instructions = addresses.shape[1]
        warps = self.warp_of_thread[active]
        addresses = addresses[active]
        common = dict(
            op=op.name,
            location=_location(op),
            kind=kind,
            buffer=buf.name,
            block=_linear_block(self.block_id, self.launch.grid),
            instruction_bytes=width,
            instructions=num_instructions,
            bytes_per_thread=int(np.prod(vshape, dtype=np.int64)) * elem_bytes,
        )
        if buf.space == "global":
            sectors = _sectors(warps, addresses, width, self.launch.num_warps)
            for w in np.unique(warps):
                self.report.global_accesses.append(GlobalAccess(warp=int(w), sectors=int(sectors[w]), **common))
            return
        lanes = self.lane_of_thread[active]
        wave, ideal = _wavefronts(
            warps, lanes, addresses, width, self.launch.num_warps, self.launch.threads_per_warp, kind
        )
        moved = _distinct_elements(warps, offsets[active], self.launch.num_warps) * elem_bytes
        for w in np.unique(warps):
            self.report.shared_accesses.append(
                SharedAccess(
                    warp=int(w), wavefronts=int(wave[w]), ideal_wavefronts=int(ideal[w]), bytes=int(moved[w]), **common
                )
            )

    # ---- race detection

    def track_read(self, op, buf: Buffer, offsets: np.ndarray) -> None:
        tracking = buf.race_tracking()
        warp_bits = self._warp_bits(offsets)
        flat = offsets.ravel()
        if self.launch.check_uninitialized and not tracking.initialized[flat].all():
            bad = flat[~tracking.initialized[flat]][0]
            raise MemoryAccessError(
                f"read of uninitialised workgroup memory {buf.name} element {list(buf.multi_index(int(bad)))}"
            )
        writers = tracking.writers[flat]
        racing = ((writers & ~warp_bits) != 0) & ((writers & warp_bits) == 0)
        if racing.any():
            self.race(op, "read-after-write", buf, flat, warp_bits, writers & ~warp_bits, racing)
        np.bitwise_or.at(tracking.readers, flat, warp_bits)

    def track_write(self, op, buf: Buffer, offsets: np.ndarray, values: np.ndarray) -> None:
        tracking = buf.race_tracking()
        warp_bits = self._warp_bits(offsets)
        flat = offsets.ravel()
        new_bits = buf.elem.to_bits(values).ravel()
        readers = tracking.readers[flat] & ~warp_bits
        if (readers != 0).any():
            self.race(op, "write-after-read", buf, flat, warp_bits, readers, readers != 0)
        other_writers = tracking.writers[flat] & ~warp_bits
        differs = buf.elem.to_bits(buf.data[flat]).ravel() != new_bits
        racing = (other_writers != 0) & differs
        if racing.any():
            self.race(op, "write-after-write", buf, flat, warp_bits, other_writers, racing)
        # Threads of this very store writing different values to one element.
        order = np.argsort(flat, kind="stable")
        same = flat[order][1:] == flat[order][:-1]
        clash = same & (new_bits[order][1:] != new_bits[order][:-1])
        if clash.any():
            mask = np.zeros(len(flat), bool)
            mask[order[1:][clash]] = True
            others = np.zeros(len(flat), np.uint64)
            others[order[1:][clash]] = warp_bits[order[:-1][clash]]
            self.race(op, "write-after-write", buf, flat, warp_bits, others, mask)
        np.bitwise_or.at(tracking.writers, flat, warp_bits)
        tracking.initialized[flat] = True

    def _warp_bits(self, offsets: np.ndarray) -> np.ndarray:
        """Bit ``1 << warp`` for each element access, flattened like ``offsets``."""
        warps = self.warp_of_thread[self.active].astype(np.uint64)
        per_thread = np.left_shift(np.uint64(1), warps)
        return np.broadcast_to(per_thread.reshape((-1,) + (1,) * (offsets.ndim - 1)), offsets.shape).ravel()

    def race(self, op, kind, buf, flat, warp_bits, other_bits, racing) -> None:
        i = int(np.argmax(racing))
        race = Race(
            kind=kind,
            buffer=buf.name,
            element=buf.multi_index(int(flat[i])),
            warp=int(warp_bits[i]).bit_length() - 1,
            other_warps=tuple(w for w in range(self.launch.num_warps) if int(other_bits[i]) >> w & 1),
            op=op.name,
            location=_location(op),
            block=_linear_block(self.block_id, self.launch.grid),
            interval=self.interval,
            elements=int(np.count_nonzero(racing)),
        )
        if self.launch.on_race == "raise":
            error = RaceError(str(race))
            error.located = True
            error.race = race
            raise error
        self.report.races.append(race)


def _linear_block(block_id, grid) -> int:
    return block_id[0] + grid[0] * (block_id[1] + grid[1] * block_id[2])


def _location(op) -> str:
    text = str(op.location)
    return text[4:-1] if text.startswith("loc(") and text.endswith(")") else text


def _wavefronts(warps, lanes, addresses, width, num_warps, threads_per_warp, kind):
    """Wavefronts and ideal wavefronts per warp, under the module's bank model (the lanes of a
    phase: ``core.hardware.lane_phases``).

    ``addresses`` is (active threads, instructions) of byte addresses, each instruction ``width``
    bytes wide; ``kind`` is "load" or "store"."""
    phase_of_lane = np.asarray(lane_phases(width, threads_per_warp, kind))
    phases_per_warp = int(phase_of_lane.max()) + 1
    num_instr = addresses.shape[1]
    words_per_access = max(1, width // BANK_BYTES)
    # group = (warp, instruction, phase); one row per touched 4-byte word
    instruction = warps[:, None] * num_instr + np.arange(num_instr)
    group = instruction * phases_per_warp + phase_of_lane[lanes][:, None]
    words = (addresses // BANK_BYTES)[:, :, None] + np.arange(words_per_access)
    group = np.broadcast_to(group[:, :, None], words.shape).ravel().astype(np.int64)
    words = words.ravel().astype(np.int64)
    num_groups = num_warps * num_instr * phases_per_warp
    span = int(words.max()) + 1 if words.size else 1
    unique = np.unique(group * span + words)
    unique_group, unique_word = unique // span, unique % span
    per_bank = np.bincount(unique_group * NUM_BANKS + unique_word % NUM_BANKS, minlength=num_groups * NUM_BANKS)
    per_bank = per_bank.reshape(num_warps, num_instr * phases_per_warp, NUM_BANKS)  # distinct words
    wave = per_bank.max(axis=2).sum(axis=1)
    ideal = (-(-per_bank.sum(axis=2) // NUM_BANKS)).sum(axis=1)
    return wave, ideal


def _distinct_elements(warps, offsets, num_warps):
    """Distinct buffer elements per warp: ``offsets`` is (active threads, ...) of flat offsets."""
    flat = offsets.reshape(len(warps), -1).astype(np.int64)
    span = int(flat.max()) + 1 if flat.size else 1
    keys = np.unique((warps.astype(np.int64)[:, None] * span + flat).ravel())
    return np.bincount(keys // span, minlength=num_warps)


def _sectors(warps, addresses, width, num_warps):
    """Distinct 32-byte sectors touched per warp, summed over its instructions."""
    num_instr = addresses.shape[1]
    instruction = (warps[:, None] * num_instr + np.arange(num_instr)).astype(np.int64)
    first, last = addresses // SECTOR_BYTES, (addresses + width - 1) // SECTOR_BYTES
    span = int(last.max()) + 1
    keys = [instruction * span + np.minimum(first + k, last) for k in range(int((last - first).max()) + 1)]
    unique = np.unique(np.concatenate([k.ravel() for k in keys]))
    return np.bincount(unique // span // num_instr, minlength=num_warps)


# --------------------------------------------------------------------------------------------
# Op handlers. Each takes (executor, op) and returns the list of result values (or None).


def _result_elem(op, i: int = 0) -> Elem:
    return _elem(op.results[i].type)


def _per_thread(ex: _Executor, array: np.ndarray, vshape: tuple[int, ...]) -> np.ndarray:
    """Broadcast a per-thread-invariant array of shape ``vshape`` to all threads."""
    return np.broadcast_to(array, (ex.num_threads,) + vshape)


def _constant_array(attr, t: ir.Type) -> np.ndarray:
    """Values of an arith.constant attribute, in storage form, shape = per-thread shape."""
    elem = _elem(t)
    vshape = _vector_shape(t)
    if isinstance(attr, ir.DenseElementsAttr):
        if attr.is_splat:
            raw = np.full(vshape, _scalar_attr_value(attr.get_splat_value()))
        else:
            try:
                raw = np.array(attr)
            except Exception:  # bf16 and friends have no buffer view: fall back to the text
                raw = _parse_dense_text(str(attr), elem)
            raw = raw.reshape(vshape)
    else:
        raw = np.array(_scalar_attr_value(attr))
    if elem.is_float:
        return elem.wrap(raw.astype(np.float64))
    return elem.wrap(raw.astype(np.int64).astype(np.uint64))


def _scalar_attr_value(attr):
    if isinstance(attr, ir.BoolAttr):
        return int(attr.value)
    if isinstance(attr, (ir.IntegerAttr, ir.FloatAttr)):
        return attr.value
    raise UnsupportedOp(f"constant attribute {attr} is not supported")


def _parse_dense_text(text: str, elem: Elem) -> np.ndarray:
    """Values of a dense attribute from its text, for types numpy cannot view (bf16)."""
    body = re.match(r"dense<(.*)>\s*:", text, re.S)
    if body is None:
        raise UnsupportedOp(f"constant attribute {text} is not supported")
    payload = body.group(1).strip()
    if payload.startswith('"0x'):  # raw little-endian bytes
        raw = np.frombuffer(bytes.fromhex(payload[3:-1]), dtype=elem.bits_dtype)
        return elem.from_bits(raw).astype(np.float64 if elem.is_float else np.int64)
    payload = payload.replace("true", "1").replace("false", "0")
    if elem.is_float:  # hex tokens are bit patterns (how MLIR prints inf and nan); quote them
        payload = re.sub(
            r"0x[0-9A-Fa-f]+",
            lambda m: repr(str(float(elem.from_bits(np.array([int(m.group(0), 16)]))[0]))),
            payload,
        )
    return np.array(ast.literal_eval(payload), dtype=np.float64 if elem.is_float else np.int64)


def _constant(ex, op):
    t = op.results[0].type
    return [_per_thread(ex, _constant_array(op.attributes["value"], t), _vector_shape(t))]


# ---- integer arithmetic


def _check_shift(ex, amount, width):
    if (ex.active_like(amount) & (amount >= np.uint64(width))).any():
        raise UndefinedBehaviorError(f"shift amount >= bit width {width} (poison)")
    return np.minimum(amount, width - 1)


def _int_binary(compute: Callable[[Elem, np.ndarray, np.ndarray, _Executor], np.ndarray]):
    def handler(ex, op):
        a, b = ex.operands(op)
        elem = _result_elem(op)
        return [elem.wrap(compute(elem, elem.unsigned(a), elem.unsigned(b), ex))]

    return handler


def _shift_left(e, a, b, ex):
    return a << _check_shift(ex, b, e.width)


def _shift_right_unsigned(e, a, b, ex):
    return a >> _check_shift(ex, b, e.width)


def _shift_right_signed(e, a, b, ex):
    return (e.signed(a) >> _check_shift(ex, b, e.width).astype(np.int64)).astype(np.uint64)


def _nonzero_divisor(ex, b):
    if (ex.active_like(b) & (b == 0)).any():
        raise UndefinedBehaviorError("integer division by zero")
    return np.where(b == 0, 1, b).astype(b.dtype)


def _div_unsigned(e, a, b, ex):
    return a // _nonzero_divisor(ex, b)


def _rem_unsigned(e, a, b, ex):
    return a % _nonzero_divisor(ex, b)


def _div_rem_signed(e, a, b, ex):
    """Truncating signed quotient and remainder, as int64 arrays."""
    a, b = e.signed(a), _nonzero_divisor(ex, e.signed(b))
    minimum = -(1 << (e.width - 1))
    if (ex.active_like(a) & (a == minimum) & (b == -1)).any():
        raise UndefinedBehaviorError("signed division overflow (INT_MIN / -1)")
    b = np.where((a == minimum) & (b == -1), 1, b)
    q = a // b
    q = q + ((a % b != 0) & ((a < 0) != (b < 0)))
    return q, a - q * b


def _signed_minmax(fn):
    return lambda e, a, b, ex: fn(e.signed(a), e.signed(b)).astype(np.uint64)


_INT_BINARY = {
    "arith.addi": lambda e, a, b, ex: a + b,
    "arith.subi": lambda e, a, b, ex: a - b,
    "arith.muli": lambda e, a, b, ex: a * b,
    "arith.andi": lambda e, a, b, ex: a & b,
    "arith.ori": lambda e, a, b, ex: a | b,
    "arith.xori": lambda e, a, b, ex: a ^ b,
    "arith.shli": _shift_left,
    "arith.shrui": _shift_right_unsigned,
    "arith.shrsi": _shift_right_signed,
    "arith.divui": _div_unsigned,
    "arith.remui": _rem_unsigned,
    "arith.divsi": lambda e, a, b, ex: _div_rem_signed(e, a, b, ex)[0].astype(np.uint64),
    "arith.remsi": lambda e, a, b, ex: _div_rem_signed(e, a, b, ex)[1].astype(np.uint64),
    "arith.maxui": lambda e, a, b, ex: np.maximum(a, b),
    "arith.minui": lambda e, a, b, ex: np.minimum(a, b),
    "arith.maxsi": _signed_minmax(np.maximum),
    "arith.minsi": _signed_minmax(np.minimum),
}

_CMPI = {  # arith::CmpIPredicate
    0: lambda e, a, b: a == b,
    1: lambda e, a, b: a != b,
    2: lambda e, a, b: e.signed(a) < e.signed(b),
    3: lambda e, a, b: e.signed(a) <= e.signed(b),
    4: lambda e, a, b: e.signed(a) > e.signed(b),
    5: lambda e, a, b: e.signed(a) >= e.signed(b),
    6: lambda e, a, b: a < b,
    7: lambda e, a, b: a <= b,
    8: lambda e, a, b: a > b,
    9: lambda e, a, b: a >= b,
}


def _cmpi(ex, op):
    a, b = ex.operands(op)
    elem = _elem(op.operands[0].type)
    predicate = op.attributes["predicate"].value
    return [_CMPI[predicate](elem, elem.unsigned(a), elem.unsigned(b)).astype(np.uint8)]


def _unordered(a, b):
    return np.isnan(a) | np.isnan(b)


_CMPF = {  # arith::CmpFPredicate
    0: lambda a, b: np.zeros(np.broadcast_shapes(a.shape, b.shape), bool),
    1: lambda a, b: a == b,
    2: lambda a, b: a > b,
    3: lambda a, b: a >= b,
    4: lambda a, b: a < b,
    5: lambda a, b: a <= b,
    6: lambda a, b: (a != b) & ~_unordered(a, b),
    7: lambda a, b: ~_unordered(a, b),
    8: lambda a, b: (a == b) | _unordered(a, b),
    9: lambda a, b: (a > b) | _unordered(a, b),
    10: lambda a, b: (a >= b) | _unordered(a, b),
    11: lambda a, b: (a < b) | _unordered(a, b),
    12: lambda a, b: (a <= b) | _unordered(a, b),
    13: lambda a, b: a != b,
    14: _unordered,
    15: lambda a, b: np.ones(np.broadcast_shapes(a.shape, b.shape), bool),
}


def _cmpf(ex, op):
    a, b = ex.operands(op)
    return [_CMPF[op.attributes["predicate"].value](a, b).astype(np.uint8)]


def _select(ex, op):
    cond, a, b = ex.operands(op)
    cond = cond.reshape(cond.shape + (1,) * (a.ndim - cond.ndim)) != 0
    return [np.where(cond, a, b)]


# ---- casts


def _int_cast(signed_source: bool):
    def handler(ex, op):
        (x,) = ex.operands(op)
        source, target = _elem(op.operands[0].type), _result_elem(op)
        widened = source.signed(x).astype(np.uint64) if signed_source else source.unsigned(x)
        return [target.wrap(widened)]

    return handler


def _int_to_float(signed_source: bool):
    def handler(ex, op):
        (x,) = ex.operands(op)
        source = _elem(op.operands[0].type)
        values = source.signed(x) if signed_source else source.unsigned(x)
        return [_result_elem(op).wrap(values.astype(np.float64))]

    return handler


def _float_to_int(signed_target: bool):
    def handler(ex, op):
        (x,) = ex.operands(op)
        target = _result_elem(op)
        if signed_target:
            low, high = -(2 ** (target.width - 1)), 2 ** (target.width - 1) - 1
        else:
            low, high = 0, 2**target.width - 1
        values = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=np.inf, neginf=-np.inf))
        # The limits are powers of two, hence exact in float64 even for 64-bit targets.
        limit = 2.0 ** (target.width - 1 if signed_target else target.width)
        in_range = (values >= (-limit if signed_target else 0.0)) & (values < limit)
        converted = np.where(in_range, values, 0).astype(np.int64 if signed_target else np.uint64)
        converted = converted.astype(np.uint64)
        saturated = np.where(values > 0, np.uint64(high & (2**64 - 1)), np.uint64(low & (2**64 - 1)))
        return [target.wrap(np.where(in_range, converted, saturated))]

    return handler


def _float_cast(ex, op):
    (x,) = ex.operands(op)
    return [_result_elem(op).wrap(x)]


def _bitcast(ex, op):
    """arith.bitcast and vector.bitcast: reinterpret bits, regrouping the last vector dimension."""
    (x,) = ex.operands(op)
    source, target = _elem(op.operands[0].type), _result_elem(op)
    if source.width % 8 or target.width % 8:
        raise UnsupportedOp(f"bitcast between {source.name} and {target.name}: widths must be multiples of 8")
    bits = source.to_bits(x)
    if bits.ndim == 1:
        bits = bits.reshape(-1, 1)
        regrouped = bits.view(target.bits_dtype).reshape(-1)
    else:
        regrouped = np.ascontiguousarray(bits).view(target.bits_dtype)
    return [target.from_bits(regrouped).reshape((ex.num_threads,) + _vector_shape(op.results[0].type))]


# ---- floating point


def _float_op(compute):
    def handler(ex, op):
        args = ex.operands(op)
        return [_result_elem(op).wrap(compute(*args))]

    return handler


def _fma(a, b, c):
    return a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)


_FLOAT_OPS = {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.remf": np.fmod,
    "arith.maximumf": np.maximum,
    "arith.minimumf": np.minimum,
    "arith.maxnumf": np.fmax,
    "arith.minnumf": np.fmin,
    "arith.negf": np.negative,
    "math.absf": np.abs,
    "math.ceil": np.ceil,
    "math.floor": np.floor,
    "math.exp": np.exp,
    "math.exp2": np.exp2,
    "math.log": np.log,
    "math.log2": np.log2,
    "math.sqrt": np.sqrt,
    "math.rsqrt": lambda x: 1 / np.sqrt(x),
    "math.tanh": np.tanh,
    "math.sin": np.sin,
    "math.cos": np.cos,
    "math.fma": _fma,
}


def _absi(ex, op):
    (x,) = ex.operands(op)
    elem = _result_elem(op)
    return [elem.wrap(np.abs(elem.signed(x)).astype(np.uint64))]


# ---- vector


def _position(ex, op, dynamic_operands: Sequence) -> list:
    """Static ints or per-thread index arrays of a vector.extract/insert position."""
    dynamic = iter(dynamic_operands)
    out = []
    for p in op.attributes["static_position"]:
        if p == _DYNAMIC_POSITION:
            out.append(ex.get(next(dynamic)).astype(np.int64))
        elif p == _POISON_INDEX:
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


def _vector_extract(ex, op):
    vector = ex.get(op.operands[0])
    position = _position(ex, op, op.operands[1:])
    return [vector[_checked_index(ex, position, vector.shape)]]


def _vector_insert(ex, op):
    value, dest = ex.get(op.operands[0]), ex.get(op.operands[1])
    position = _position(ex, op, op.operands[2:])
    out = np.array(dest)  # copy: values are never mutated in place
    out[_checked_index(ex, position, dest.shape)] = value
    return [out]


def _vector_broadcast(ex, op):
    (source,) = ex.operands(op)
    target = _vector_shape(op.results[0].type)
    padded = source.reshape((ex.num_threads,) + (1,) * (len(target) + 1 - source.ndim) + source.shape[1:])
    return [np.broadcast_to(padded, (ex.num_threads,) + target)]


def _vector_shuffle(ex, op):
    a, b = ex.operands(op)
    a = a.reshape(ex.num_threads, -1, *a.shape[2:]) if a.ndim == 1 else a
    b = b.reshape(ex.num_threads, -1, *b.shape[2:]) if b.ndim == 1 else b
    both = np.concatenate([a, b], axis=1)
    mask = np.array(list(op.attributes["mask"]), dtype=np.int64)
    out = both[:, np.where(mask == _POISON_INDEX, 0, mask)]
    poison = (mask == _POISON_INDEX).reshape((1, -1) + (1,) * (out.ndim - 2))
    return [np.where(poison, _result_elem(op).garbage(out.shape), out)]


def _vector_from_elements(ex, op):
    elements = ex.operands(op)
    shape = _vector_shape(op.results[0].type)
    return [np.stack(elements, axis=1).reshape((ex.num_threads,) + shape)]


def _vector_load(ex, op):
    buf, *indices = ex.operands(op)
    return [ex.access(op, "load", buf, indices, _vector_shape(op.results[0].type))]


def _vector_store(ex, op):
    value, buf, *indices = ex.operands(op)
    ex.access(op, "store", buf, indices, _vector_shape(op.operands[0].type), value)
    return []


# ---- memref


def _memref_load(ex, op):
    buf, *indices = ex.operands(op)
    return [ex.access(op, "load", buf, indices, ())]


def _memref_store(ex, op):
    value, buf, *indices = ex.operands(op)
    ex.access(op, "store", buf, indices, (), value)
    return []


def _memref_alloc(ex, op):
    t = op.results[0].type
    if _memory_space(t) != "workgroup":
        raise UnsupportedOp(f"memref.alloc of {t}: only workgroup memory can be allocated in a kernel")
    if len(op.operands):
        raise UnsupportedOp("memref.alloc with dynamic sizes or symbols")
    return [ex.new_shared(f"alloc@{_location(op)}", t)]


@dataclasses.dataclass(frozen=True)
class DynamicSharedMemory:
    """The value of ``gpu.dynamic_shared_memory``: the launch's dynamic shared bytes, from
    ``base_address`` on; only ``memref.view`` reads it."""

    base_address: int


def _dynamic_shared_memory(ex, op):
    if ex.dynamic_base is None:
        ex.dynamic_base = -(-ex.shared_top // SHARED_BASE_ALIGNMENT) * SHARED_BASE_ALIGNMENT
    return [DynamicSharedMemory(ex.dynamic_base)]


def _memref_view(ex, op):
    source, shift, *sizes = ex.operands(op)
    if not isinstance(source, DynamicSharedMemory):
        raise UnsupportedOp("memref.view of a memref other than gpu.dynamic_shared_memory")
    if sizes:
        raise UnsupportedOp("memref.view with dynamic sizes")
    t = op.results[0].type
    address = source.base_address + ex.uniform(np.asarray(shift), "memref.view byte shift")
    key = (address, str(t))
    if key not in ex.dynamic_views:
        buf = ex.new_shared(f"dynamic+{address - source.base_address} ({t})", t, address)
        end = address + len(buf.data) * buf.elem.mem_bytes
        for other in ex.dynamic_views.values():
            if other.base_address < end and address < other.base_address + len(other.data) * other.elem.mem_bytes:
                raise UnsupportedOp(f"memref.view: {buf.name} overlaps {other.name} (aliasing views)")
        ex.dynamic_views[key] = buf
    return [ex.dynamic_views[key]]


# ---- gpu


def _dimension(op) -> int:
    text = str(op.attributes["dimension"])  # "#gpu<dim x>"
    return "xyz".index(text[-2])


def _index_op(values: Callable[[_Executor, int], Any]):
    def handler(ex, op):
        return [np.broadcast_to(np.asarray(values(ex, _dimension(op)), dtype=np.uint64), (ex.num_threads,))]

    return handler


def _lane_id(ex, op):
    return [ex.lane_of_thread.astype(np.uint64)]


def _barrier(ex, op):
    ex.require_all_active("gpu.barrier")
    for buf in ex.shared:
        buf.start_interval()
    ex.interval += 1
    ex.report.barriers += 1
    return []


def _shuffle(ex, op):
    value, offset, width = ex.operands(op)
    mode = str(op.attributes["mode"]).split()[-1].rstrip(">")  # "#gpu<shuffle_mode xor>"
    width = ex.uniform(width, "gpu.shuffle width")
    if not 1 <= width <= ex.launch.threads_per_warp:
        raise UndefinedBehaviorError(f"gpu.shuffle width {width} outside [1, {ex.launch.threads_per_warp}]")
    lane = ex.lane_of_thread.astype(np.int64)
    # "the first `width` lanes of the subgroup must be active" -- in every warp that runs it.
    warp_active = np.zeros(ex.launch.num_warps, bool)
    np.logical_or.at(warp_active, ex.warp_of_thread, ex.active)
    needed = warp_active[ex.warp_of_thread] & (lane < width)
    if (needed & ~ex.active).any():
        raise UndefinedBehaviorError(
            "gpu.shuffle in divergent control flow: the first `width` lanes of a warp must be active"
        )
    offset = _elem(op.operands[1].type).signed(offset)
    source = {"xor": lane ^ offset, "up": lane - offset, "down": lane + offset, "idx": offset}[mode]
    valid = (lane < width) & (source >= 0) & (source < width)
    source_thread = ex.warp_of_thread * ex.launch.threads_per_warp + np.where(valid, source, lane)
    result = value[source_thread]
    valid_shape = valid.reshape(valid.shape + (1,) * (result.ndim - 1))
    result = np.where(valid_shape, result, _result_elem(op).garbage(result.shape))
    # NVVM moves 32 bits per shfl.sync; wider values take several.
    value_type = op.operands[0].type
    bits = _elem(value_type).width * int(np.prod(_vector_shape(value_type), dtype=np.int64))
    ex.report.shuffles += int(warp_active.sum()) * -(-bits // 32)
    return [result, valid.astype(np.uint8)]


# ---- scf


def _scf_if(ex, op):
    cond = ex.get(op.operands[0]) != 0
    then_mask, else_mask = ex.active & cond, ex.active & ~cond
    then_region, else_region = op.regions[0], op.regions[1]
    then_values = ex.run_masked(then_region, then_mask) if then_mask.any() else None
    else_values = None
    if len(else_region.blocks) and else_mask.any():
        else_values = ex.run_masked(else_region, else_mask)
    if not len(op.results):
        return []
    if then_values is None:
        return else_values
    if else_values is None:
        return then_values
    return [
        np.where(cond.reshape(cond.shape + (1,) * (t.ndim - 1)), t, e) if isinstance(t, np.ndarray) else t
        for t, e in zip(then_values, else_values)
    ]


def _scf_for(ex, op):
    lower, upper, step, *carried = ex.operands(op)
    elem = _elem(op.operands[0].type)
    if "unsignedCmp" in op.attributes:
        compare = np.less
    else:

        def compare(a, b):
            return elem.signed(a) < elem.signed(b)

    body = op.regions[0]
    iv = lower
    running = ex.active
    while True:
        running = running & compare(iv, upper)
        if not running.any():
            return carried
        if (running & (elem.signed(step) <= 0)).any():
            raise UndefinedBehaviorError("scf.for step must be positive")
        yielded = ex.run_masked(body, running, [iv, *carried])
        carried = [
            np.where(running.reshape((-1,) + (1,) * (y.ndim - 1)), y, c) if isinstance(y, np.ndarray) else y
            for y, c in zip(yielded, carried)
        ]
        iv = np.where(running, elem.wrap(elem.unsigned(iv) + elem.unsigned(step)), iv)


# ---- LLVM pointers into workgroup memory and the NVVM matrix instructions


def _extract_aligned_pointer(ex, op):
    (buf,) = ex.operands(op)
    if buf.space != "workgroup":
        raise UnsupportedOp("pointers into global memory are not supported (workgroup memrefs only)")
    return [np.full(ex.num_threads, buf.base_address, dtype=np.uint64)]


def _pointer_space(t: ir.Type) -> int:
    match = re.fullmatch(r"!llvm\.ptr(?:<(\d+)>)?", str(t))
    if match is None:
        raise UnsupportedOp(f"type {t} is not an LLVM pointer")
    return int(match.group(1) or 0)


def _inttoptr(ex, op):
    (x,) = ex.operands(op)
    if _pointer_space(op.results[0].type) != 3:
        raise UnsupportedOp(f"llvm.inttoptr to {op.results[0].type}: only shared (address space 3) pointers")
    return [_elem(op.operands[0].type).unsigned(x)]


def _ptrtoint(ex, op):
    (x,) = ex.operands(op)
    return [_result_elem(op).wrap(x)]


def _getelementptr(ex, op):
    """``base + index * sizeof(elem_type)`` for one (constant or dynamic) index into a scalar type."""
    base, *dynamic = ex.operands(op)
    raw = list(op.attributes["rawConstantIndices"])
    element = op.attributes["elem_type"].value
    if len(raw) != 1 or not isinstance(element, (ir.IntegerType, ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)):
        raise UnsupportedOp("llvm.getelementptr: only one index into a scalar integer or float type is supported")
    if raw[0] == _GEP_DYNAMIC_INDEX:
        index = _elem(op.operands[1].type).signed(dynamic[0])
    else:
        index = np.full(ex.num_threads, raw[0], dtype=np.int64)
    size = _elem(element).mem_bytes
    return [(base.astype(np.int64) + index * size).astype(np.uint64)]


def _extractvalue(ex, op):
    (aggregate,) = ex.operands(op)
    position = list(op.attributes["position"])
    if len(position) != 1 or not isinstance(aggregate, tuple):
        raise UnsupportedOp("llvm.extractvalue: only one position into a struct of scalars is supported")
    return [aggregate[position[0]]]


@dataclasses.dataclass(frozen=True)
class _MatrixForm:
    """One ``nvvm.ldmatrix``/``nvvm.stmatrix``: ``num`` 8x8 b16 matrices, transposed or not."""

    num: int
    trans: bool


def _matrix_form(op, num: int) -> _MatrixForm:
    shape, element = str(op.attributes["shape"]), str(op.attributes["eltType"])
    if shape != "#nvvm.ld_st_matrix_shape<m = 8, n = 8>" or element != "#nvvm.ld_st_matrix_elt_type<b16>":
        raise UnsupportedOp(f"{op.name} with shape {shape} and eltType {element}: only m8n8 b16 is supported")
    if num not in (1, 2, 4):
        raise UnsupportedOp(f"{op.name}: num must be 1, 2 or 4, got {num}")
    layout = str(op.attributes["layout"])
    return _MatrixForm(num, layout == "#nvvm.mma_layout<col>")


def _row_addresses(ex, pointers: np.ndarray, form: _MatrixForm) -> np.ndarray:
    """Per thread, the byte address of the row it reads or writes: lane ``8 i + r`` supplies row
    ``r`` of matrix ``i``; lanes from ``8 num`` on repeat the row of lane ``lane % (8 num)``."""
    providers = ex.warp_of_thread * ex.launch.threads_per_warp + ex.lane_of_thread % (8 * form.num)
    return pointers[providers].astype(np.int64)


def _shared_rows(ex, op, addresses: np.ndarray) -> tuple[Buffer, np.ndarray]:
    """The workgroup buffer holding every 16-byte row, and each thread's row as element offsets."""
    misaligned = addresses % MATRIX_ROW_BYTES != 0
    if misaligned.any():
        t = int(np.argmax(misaligned))
        raise MemoryAccessError(f"{op.name}: row address {int(addresses[t])} of thread {t} is not 16-byte aligned")
    first = int(addresses[0])
    found = [b for b in ex.shared if b.base_address <= first < b.base_address + len(b.data) * b.elem.mem_bytes]
    if not found:
        raise MemoryAccessError(f"{op.name}: row address {first} of thread 0 is in no workgroup buffer")
    buf = found[0]
    end = buf.base_address + len(buf.data) * buf.elem.mem_bytes
    outside = (addresses < buf.base_address) | (addresses + MATRIX_ROW_BYTES > end)
    if outside.any():
        t = int(np.argmax(outside))
        raise MemoryAccessError(
            f"{op.name}: row address {int(addresses[t])} of thread {t} is outside the "
            "workgroup buffer of thread 0's row (rows must lie in one workgroup buffer)"
        )
    if MATRIX_ROW_BYTES % buf.elem.mem_bytes:
        raise UnsupportedOp(f"{op.name} on a buffer of {buf.elem.name}: elements must divide a 16-byte row")
    per_row = MATRIX_ROW_BYTES // buf.elem.mem_bytes
    start = (addresses - buf.base_address) // buf.elem.mem_bytes
    return buf, start[:, None] + np.arange(per_row)


def _rows_as_b16(buf: Buffer, values: np.ndarray) -> np.ndarray:
    """(threads, elements of a row) in the buffer's type -> (threads, 8) uint16."""
    return np.ascontiguousarray(buf.elem.to_bits(values)).view(np.uint8).reshape(len(values), -1).view(np.uint16)


def _b16_as_rows(buf: Buffer, halves: np.ndarray) -> np.ndarray:
    """(threads, 8) uint16 -> (threads, elements of a row) in the buffer's type."""
    raw = np.ascontiguousarray(halves.astype(np.uint16)).view(np.uint8).view(buf.elem.bits_dtype)
    return buf.elem.from_bits(raw.reshape(len(halves), -1))


def _fragment_source(ex, form: _MatrixForm, matrix: int, half: int) -> tuple[np.ndarray, np.ndarray]:
    """For each thread, (thread, column) of the row that holds half ``half`` of its fragment of
    matrix ``matrix``: row ``lane / 4``, column ``2 (lane % 4) + half`` of the fragment matrix;
    with ``.trans`` the fragment matrix is the stored one transposed (PTX ISA, ldmatrix)."""
    lane = ex.lane_of_thread
    row, col = lane // 4, 2 * (lane % 4) + half
    if form.trans:
        row, col = col, row
    return ex.warp_of_thread * ex.launch.threads_per_warp + 8 * matrix + row, col


def _account_matrix(
    ex, op, kind: str, buf: Buffer, addresses: np.ndarray, offsets: np.ndarray, form: _MatrixForm
) -> None:
    """Wavefronts per 8x8 matrix: its 8 row addresses (16 bytes each) are served as one phase."""
    providing = ex.lane_of_thread < 8 * form.num
    warps, lanes = ex.warp_of_thread[providing], ex.lane_of_thread[providing]
    wave, ideal = _wavefronts(
        warps,
        lanes,
        addresses[providing][:, None],
        MATRIX_ROW_BYTES,
        ex.launch.num_warps,
        ex.launch.threads_per_warp,
        kind,
    )
    moved = _distinct_elements(warps, offsets[providing], ex.launch.num_warps) * buf.elem.mem_bytes
    for w in np.unique(warps):
        ex.report.shared_accesses.append(
            SharedAccess(
                op=op.name,
                location=_location(op),
                kind=kind,
                buffer=buf.name,
                block=_linear_block(ex.block_id, ex.launch.grid),
                warp=int(w),
                bytes_per_thread=4 * form.num,
                instruction_bytes=MATRIX_ROW_BYTES,
                instructions=1,
                wavefronts=int(wave[w]),
                ideal_wavefronts=int(ideal[w]),
                bytes=int(moved[w]),
            )
        )


def _matrix_rows(ex, op, pointer, form: _MatrixForm) -> tuple[Buffer, np.ndarray, np.ndarray]:
    ex.require_all_active(op.name)
    addresses = _row_addresses(ex, pointer, form)
    buf, offsets = _shared_rows(ex, op, addresses)
    return buf, addresses, offsets


def _ldmatrix(ex, op):
    (pointer,) = ex.operands(op)
    result_type = op.results[0].type
    num = 1 if isinstance(result_type, ir.IntegerType) else op.attributes["num"].value
    form = _matrix_form(op, num)
    buf, addresses, offsets = _matrix_rows(ex, op, pointer, form)
    _account_matrix(ex, op, "load", buf, addresses, offsets, form)
    ex.track_read(op, buf, offsets)
    rows = _rows_as_b16(buf, buf.data[offsets])
    words = []
    for matrix in range(form.num):
        low = rows[_fragment_source(ex, form, matrix, 0)].astype(np.uint32)
        high = rows[_fragment_source(ex, form, matrix, 1)].astype(np.uint32)
        words.append(low | high << np.uint32(16))
    return [words[0] if form.num == 1 and isinstance(result_type, ir.IntegerType) else tuple(words)]


def _stmatrix(ex, op):
    pointer, *sources = ex.operands(op)
    form = _matrix_form(op, len(sources))
    buf, addresses, offsets = _matrix_rows(ex, op, pointer, form)
    _account_matrix(ex, op, "store", buf, addresses, offsets, form)
    halves = np.zeros((ex.num_threads, 8), dtype=np.uint16)
    for matrix, source in enumerate(sources):
        words = np.asarray(source).astype(np.uint32)
        for half in (0, 1):
            thread, col = _fragment_source(ex, form, matrix, half)
            halves[thread, col] = (words >> np.uint32(16 * half)) & np.uint32(0xFFFF)
    # Only the lanes that supply a row address write it (halves is indexed by the supplying thread).
    providing = ex.lane_of_thread < 8 * form.num
    values = _b16_as_rows(buf, halves)
    saved = ex.active
    ex.active = providing
    try:
        ex.track_write(op, buf, offsets[providing], values[providing])
    finally:
        ex.active = saved
    buf.data[offsets[providing]] = values[providing]
    return []


# --------------------------------------------------------------------------------------------
# The dispatch table


_HANDLERS: dict[str, Callable[[_Executor, Any], list | None]] = {
    "arith.constant": _constant,
    **{name: _int_binary(fn) for name, fn in _INT_BINARY.items()},
    "arith.cmpi": _cmpi,
    "arith.cmpf": _cmpf,
    "arith.select": _select,
    "arith.index_cast": _int_cast(signed_source=True),
    "arith.index_castui": _int_cast(signed_source=False),
    "arith.extsi": _int_cast(signed_source=True),
    "arith.extui": _int_cast(signed_source=False),
    "arith.trunci": _int_cast(signed_source=False),
    "arith.sitofp": _int_to_float(signed_source=True),
    "arith.uitofp": _int_to_float(signed_source=False),
    "arith.fptosi": _float_to_int(signed_target=True),
    "arith.fptoui": _float_to_int(signed_target=False),
    "arith.truncf": _float_cast,
    "arith.extf": _float_cast,
    "arith.bitcast": _bitcast,
    **{name: _float_op(fn) for name, fn in _FLOAT_OPS.items()},
    "math.absi": _absi,
    "vector.load": _vector_load,
    "vector.store": _vector_store,
    "vector.extract": _vector_extract,
    "vector.insert": _vector_insert,
    "vector.broadcast": _vector_broadcast,
    "vector.shuffle": _vector_shuffle,
    "vector.from_elements": _vector_from_elements,
    "vector.bitcast": _bitcast,
    "memref.load": _memref_load,
    "memref.store": _memref_store,
    "memref.alloc": _memref_alloc,
    "memref.extract_aligned_pointer_as_index": _extract_aligned_pointer,
    "memref.view": _memref_view,
    "llvm.inttoptr": _inttoptr,
    "llvm.ptrtoint": _ptrtoint,
    "llvm.getelementptr": _getelementptr,
    "llvm.extractvalue": _extractvalue,
    "llvm.bitcast": _bitcast,
    "nvvm.ldmatrix": _ldmatrix,
    "nvvm.stmatrix": _stmatrix,
    "gpu.thread_id": _index_op(lambda ex, d: ex.tid if d == 0 else 0),
    "gpu.block_dim": _index_op(lambda ex, d: ex.num_threads if d == 0 else 1),
    "gpu.block_id": _index_op(lambda ex, d: ex.block_id[d]),
    "gpu.grid_dim": _index_op(lambda ex, d: ex.launch.grid[d]),
    "gpu.lane_id": _lane_id,
    "gpu.barrier": _barrier,
    "gpu.shuffle": _shuffle,
    "gpu.dynamic_shared_memory": _dynamic_shared_memory,
    "scf.if": _scf_if,
    "scf.for": _scf_for,
}

# Terminators end a block; run_block returns their operands.
_TERMINATORS = frozenset({"scf.yield", "gpu.return", "func.return"})

#: Every op the interpreter executes; anything else raises :class:`UnsupportedOp`.
SUPPORTED_OPS: frozenset[str] = frozenset(_HANDLERS) | _TERMINATORS


# --------------------------------------------------------------------------------------------
# Entry point


def _find_kernel(root, kernel: str | None):
    """The gpu.func (or func.func) to run, from a module, gpu.module or function op."""
    op = root.operation if hasattr(root, "operation") else root
    if op.name in ("gpu.func", "func.func"):
        return op
    candidates = []

    def visit(container):
        for child in container.regions[0].blocks[0].operations:
            child = child.operation
            if child.name == "gpu.module":
                visit(child)
            elif child.name in ("gpu.func", "func.func"):
                candidates.append(child)

    visit(op)
    # gpu kernels win over func.func (a module may also hold host code that launches them)
    kernels = [f for f in candidates if "gpu.kernel" in f.attributes]
    kernels = kernels or [f for f in candidates if f.name == "func.func"]
    names = [f.attributes["sym_name"].value for f in kernels]
    if kernel is not None:
        kernels = [f for f, n in zip(kernels, names) if n == kernel]
        if not kernels:
            raise SimtError(f"no kernel named {kernel!r}; found {names}")
    elif len(kernels) != 1:
        raise SimtError(f"expected exactly one kernel, found {names}; pass kernel=<name>")
    return kernels[0]


def _triple(value, default: int) -> tuple[int, int, int]:
    if isinstance(value, (int, np.integer)):
        return (int(value), default, default)
    values = [int(v) for v in value]
    if len(values) > 3:
        raise ValueError(f"a grid position has at most 3 dimensions, got {values}")
    x, y, z = values + [default] * (3 - len(values))
    return (x, y, z)


def _bind_argument(index: int, block_arg: ir.BlockArgument, value, num_threads: int):
    """The interpreter value of one kernel argument: a Buffer over the caller's array for a
    memref, else a per-thread array (one value for all threads, or one per thread)."""
    t = block_arg.type
    name = f"argument #{index} ({block_arg.get_name()}: {t})"
    elem = _elem(t)
    if not isinstance(t, ir.MemRefType):
        raw = np.asarray(value)
        raw = raw.astype(np.float64) if elem.is_float else raw.astype(np.int64).astype(np.uint64)
        return elem.wrap(np.broadcast_to(raw, (num_threads,) + _vector_shape(t)))
    if _memory_space(t) != "global":
        raise MemoryAccessError(f"{name}: kernel arguments must be global memrefs")
    if not isinstance(value, np.ndarray):
        raise MemoryAccessError(f"{name}: expected a numpy array, got {type(value).__name__}")
    kind_ok = value.dtype.kind in ("f" if elem.is_float else "iub")
    if not kind_ok or value.dtype.itemsize != elem.storage.itemsize:
        raise MemoryAccessError(f"{name}: numpy dtype {value.dtype} cannot hold {elem.name} (use {elem.storage})")
    if not value.flags.c_contiguous or not value.flags.writeable:
        raise MemoryAccessError(f"{name}: the array must be C-contiguous and writeable")
    dynamic = ir.ShapedType.get_dynamic_size()
    if len(t.shape) != value.ndim or any(s not in (d, dynamic) for s, d in zip(t.shape, value.shape)):
        raise MemoryAccessError(f"{name}: array shape {list(value.shape)} does not match")
    strides, offset = _memref_layout(t, value.shape)
    flat = value.reshape(-1).view(elem.storage)  # a view: stores land in the caller's array
    if value.size and offset + sum((d - 1) * s for d, s in zip(value.shape, strides)) >= value.size:
        raise MemoryAccessError(f"{name}: the memref layout reaches beyond the array")
    return Buffer(name, "global", elem, flat, tuple(value.shape), strides, offset, base_address=0)


def _positional(args: Sequence | Mapping, num_inputs: int) -> list:
    if not isinstance(args, Mapping):
        args = list(args)
        if len(args) != num_inputs:
            raise ValueError(f"kernel takes {num_inputs} arguments, got {len(args)}")
        return args
    by_position = {}
    for key, value in args.items():
        match = re.fullmatch(r"%?arg(\d+)", key) if isinstance(key, str) else None
        if isinstance(key, int):
            by_position[key] = value
        elif match is not None:
            by_position[int(match.group(1))] = value
        else:
            raise ValueError(f"argument key {key!r} is neither a position nor 'argN'")
    if sorted(by_position) != list(range(num_inputs)):
        raise ValueError(f"arguments given for positions {sorted(by_position)}, kernel takes {num_inputs}")
    return [by_position[i] for i in range(num_inputs)]


def run_kernel(
    module_or_func,
    args: Sequence | Mapping = (),
    *,
    num_warps: int | None = None,
    threads_per_warp: int | None = None,
    block_id: int | Sequence[int] | None = None,
    num_blocks: int | Sequence[int] = 1,
    kernel: str | None = None,
    on_race: str = "raise",
    check_uninitialized: bool = True,
) -> Report:
    """Run a lowered kernel for one block (or every block of the grid) and report its costs.

    ``module_or_func``: an ``ir.Module`` (or its text), a ``gpu.module``, or the ``gpu.func`` /
    ``func.func`` itself; ``kernel`` picks a kernel by name when there are several.
    ``args``: one value per function argument (workgroup attributions are not arguments), as a
    list or as a dict keyed by position or ``"argN"`` -- MLIR does not keep SSA names. Memref
    arguments are C-contiguous numpy arrays, updated in place; scalars are Python/numpy numbers.
    ``threads_per_warp`` defaults to the ``"ttg.threads-per-warp"`` of the nearest enclosing op that
    has one (a kernel lowered from a 64-lane module keeps it), else 32; ``num_warps`` defaults to
    ``known_block_size / threads_per_warp``. ``block_id`` runs that one
    block; by default every block of ``num_blocks`` runs, one after the other.
    ``on_race``: ``"raise"`` (:class:`RaceError`) or ``"record"`` (into :attr:`Report.races`).
    ``check_uninitialized``: raise on reads of workgroup memory that nothing wrote.
    """
    if on_race not in ("raise", "record"):
        raise ValueError("on_race must be 'raise' or 'record'")
    with _parsed(module_or_func) as root:
        func = _find_kernel(root, kernel)
        threads_per_warp = threads_per_warp or _lanes_of(func)
        warps = _warps_of(func, num_warps, threads_per_warp)
        launch = _Launch(warps, threads_per_warp, _triple(num_blocks, 1), on_race, check_uninitialized)
        body, attributions = _kernel_body(func)
        args = _positional(args, len(body.arguments) - len(attributions))
        blocks = _blocks_to_run(launch.grid, block_id)
        report = Report(launch.num_warps, threads_per_warp, blocks, args)
        bound = [_bind_argument(i, a, v, launch.num_threads) for i, (a, v) in enumerate(zip(body.arguments, args))]
        with np.errstate(all="ignore"):  # overflow, NaN, ... are part of the semantics, not warnings
            for b in blocks:
                ex = _Executor(launch, b, report)
                workgroup = [
                    ex.new_shared(f"workgroup#{i} ({a.get_name()})", a.type) for i, a in enumerate(attributions)
                ]
                ex.run_block(body, bound + workgroup)
                report.workgroup_buffers.extend(ex.shared)
        return report


@contextlib.contextmanager
def _parsed(module_or_func) -> Iterator[Any]:
    """``module_or_func``, or the module its text parses to (in a context that lives as long)."""
    if not isinstance(module_or_func, str):
        yield module_or_func
        return
    with ir.Context():
        yield ir.Module.parse(module_or_func)


def _lanes_of(func) -> int:
    """The ``"ttg.threads-per-warp"`` of the nearest op around ``func`` that has one, else 32."""
    op = func.operation
    while op is not None:
        if "ttg.threads-per-warp" in op.attributes:
            return ir.IntegerAttr(op.attributes["ttg.threads-per-warp"]).value
        op = op.parent.operation if op.parent is not None else None
    return 32


def _warps_of(func, num_warps: int | None, threads_per_warp: int) -> int:
    """The launch's warps: ``num_warps``, or what the kernel's ``known_block_size`` declares."""
    attributes = func.attributes
    known = list(attributes["known_block_size"]) if "known_block_size" in attributes else None
    if num_warps is None:
        if known is None:
            raise ValueError("num_warps is required when the kernel has no known_block_size")
        num_warps = known[0] // threads_per_warp
    if not 1 <= num_warps <= 64:  # warps are tracked as bits of a uint64
        raise ValueError(f"num_warps must be in [1, 64], got {num_warps}")
    num_threads = num_warps * threads_per_warp
    if known is not None and known != [num_threads, 1, 1]:
        raise ValueError(f"kernel declares known_block_size {known} but the launch has {num_threads} threads")
    return num_warps


def _kernel_body(func) -> tuple[ir.Block, list[ir.BlockArgument]]:
    """The kernel's one block and its workgroup attributions (the block arguments after the inputs)."""
    if len(func.regions[0].blocks) != 1:
        raise UnsupportedOp("kernels with more than one block (unstructured control flow) are not supported")
    body = func.regions[0].blocks[0]
    attributes = func.attributes
    attributions = list(body.arguments)[len(attributes["function_type"].value.inputs) :]
    num_workgroup = attributes["workgroup_attributions"].value if "workgroup_attributions" in attributes else 0
    if len(attributions) != num_workgroup:
        raise UnsupportedOp("private attributions (per-thread memory) are not supported")
    for a in attributions:
        if _memory_space(a.type) != "workgroup":
            raise UnsupportedOp(f"workgroup attribution {a.get_name()}: {a.type} is not in workgroup memory")
    return body, attributions


def _blocks_to_run(grid: tuple[int, int, int], block_id) -> list[tuple[int, int, int]]:
    """``block_id``, or every block of ``grid`` (x fastest); ValueError for a block outside it."""
    if block_id is None:
        blocks = [(x, y, z) for z in range(grid[2]) for y in range(grid[1]) for x in range(grid[0])]
    else:
        blocks = [_triple(block_id, 0)]
    for b in blocks:
        if not all(0 <= i < g for i, g in zip(b, grid)):
            raise ValueError(f"block_id {b} outside grid {grid}")
    return blocks
