"""The machine the SIMT interpreter executes on: one block of threads in lockstep, their
values, workgroup memory with its bank model and race tracking, barriers, and the table of op
handlers that the dialect modules (`simt/dialects/`) fill with `@handles`.

A handler takes the machine and the op and returns the list of the op's result values (or None
for none). Every op has exactly one handler: registering a name twice is an error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import mlir.ir as ir
import numpy as np

from ..ir.upstream import source_position
from .banks import bank_wavefronts, distinct_elements, instruction_bytes, sector_counts
from .elements import elem_of, result_elem, vector_shape
from .errors import MemoryAccessError, RaceError, SimtError, UndefinedBehaviorError, UnsupportedOp
from .memory import SHARED_BASE_ALIGNMENT, Buffer, SharedBytes, memref_layout, typed_view
from .report import GlobalAccess, Race, Report, SharedAccess

__all__ = [
    "HANDLERS",
    "AsyncCopies",
    "AsyncCopy",
    "TERMINATORS",
    "Handler",
    "Launch",
    "Machine",
    "bitcast",
    "float_op",
    "handles",
    "linear_block",
    "location_of",
    "per_thread",
    "register",
    "terminator",
]

Handler = Callable[["Machine", Any], "list | None"]

#: op name -> its handler; filled by the dialect modules.
HANDLERS: dict[str, Handler] = {}
#: Terminators end a block; run_block returns their operands.
TERMINATORS: set[str] = set()


def register(name: str, handler: Handler) -> Handler:
    """Make `handler` the one handler of op `name`; ValueError when `name` has one already."""
    if name in HANDLERS or name in TERMINATORS:
        raise ValueError(f"the SIMT interpreter already has a handler for {name}")
    HANDLERS[name] = handler
    return handler


def handles(*names: str) -> Callable[[Handler], Handler]:
    """Decorator: the function handles the ops `names`."""

    def decorate(handler: Handler) -> Handler:
        for name in names:
            register(name, handler)
        return handler

    return decorate


def terminator(*names: str) -> None:
    """The ops `names` end a block (their operands are the block's results)."""
    for name in names:
        if name in HANDLERS or name in TERMINATORS:
            raise ValueError(f"the SIMT interpreter already has a handler for {name}")
        TERMINATORS.add(name)


def location_of(op) -> str:
    """Where ``op`` was written, as every message of the project says it: ``file:line:col`` of the
    first file location inside its location (under names, call sites, fused locations:
    ``ir.upstream.source_position``), else the location's text."""
    return source_position(op.location)


@dataclasses.dataclass(frozen=True)
class Launch:
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


class Machine:
    """Executes one block (``block_id``) of the launch. Handlers in ``HANDLERS`` receive it and the op."""

    def __init__(self, launch: Launch, block_id: tuple[int, int, int], report: Report) -> None:
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
        self.views: list[Buffer] = []  # the typed views of workgroup bytes (`view_shared`)
        self.interval = 0
        self.global_buffers: list[Buffer] = []  # the kernel's global memref arguments (cp.async finds them)
        self.async_copies = AsyncCopies()

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

    def require_warps_converged(self, what: str) -> None:
        """A warp-collective (``.aligned``) instruction: every lane of a warp executes it, or none
        does (a warp-uniform branch may skip it); at least one warp executes it."""
        per_warp = self.active.reshape(-1, self.launch.threads_per_warp)
        split = per_warp.any(axis=1) & ~per_warp.all(axis=1)
        if split.any() or not per_warp.any():
            raise UndefinedBehaviorError(
                f"{what} reached by only {int(self.active.sum())} of {self.num_threads} threads, "
                "not by whole warps (divergent control flow)"
            )

    # ---- blocks and regions

    def run_block(self, block: ir.Block, args: Sequence = ()) -> list:
        """Run ``block`` with its arguments bound to ``args``; return the terminator's operands."""
        for arg, value in zip(block.arguments, args, strict=True):
            self.env[arg] = value
        for op in block.operations:
            op = op.operation
            name = op.name
            if name in TERMINATORS:
                return self.operands(op)
            handler = HANDLERS.get(name)
            if handler is None:
                error = UnsupportedOp(
                    f"op '{name}' at {location_of(op)} is not supported by the SIMT interpreter "
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
                located = type(error)(f"{name} at {location_of(op)}: {error}")
                located.located = True
                raise located from None
            except Exception as error:  # an interpreter bug: still say which op triggered it
                located = SimtError(f"internal error executing {name} at {location_of(op)}: {error!r}")
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
        """A fresh workgroup allocation of type ``t`` at the next free 128-byte-aligned address,
        or at ``address`` (a view of dynamic shared memory): its bytes and their typed view."""
        elem, shape, strides, offset, size = _static_layout(t)
        aligned_top = -(-self.shared_top // SHARED_BASE_ALIGNMENT) * SHARED_BASE_ALIGNMENT
        base = aligned_top if address is None else address
        self.shared_top = max(self.shared_top, base + size * elem.mem_bytes)
        memory = SharedBytes.of_size(name, base, size * elem.mem_bytes)
        data = typed_view(memory.raw, elem)
        data[:] = elem.garbage(size)  # floats start as NaN
        buf = Buffer(name, "workgroup", elem, data, shape, strides, offset, base, memory=memory)
        self.shared.append(buf)
        return buf

    def view_shared(self, source: Buffer, shift: int, t: ir.MemRefType) -> Buffer:
        """``memref.view`` of the workgroup bytes ``source`` (a 1-D i8 buffer) at byte ``shift``:
        a buffer of type ``t`` sharing ``source``'s bytes and their race tracking."""
        if source.memory is None or source.elem.mem_bytes != 1 or len(source.shape) != 1 or source.offset:
            raise UnsupportedOp(f"memref.view of {source.name}: the source must be 1-D workgroup bytes (i8)")
        elem, shape, strides, offset, size = _static_layout(t)
        nbytes = size * elem.mem_bytes
        if shift < 0 or shift + nbytes > source.shape[0] or shift % elem.mem_bytes:
            raise MemoryAccessError(
                f"memref.view of {nbytes} bytes at byte {shift} of {source.name} ({source.shape[0]} bytes): "
                "outside it or between elements"
            )
        start = source.byte_offset + shift
        data = typed_view(source.memory.raw[start : start + nbytes], elem)
        name = f"{source.name}+{shift} ({t})"
        buf = Buffer(
            name,
            "workgroup",
            elem,
            data,
            shape,
            strides,
            offset,
            source.base_address + shift,
            memory=source.memory,
            byte_offset=start,
        )
        self.views.append(buf)
        return buf

    def workgroup_buffers(self) -> list[Buffer]:
        """The block's workgroup buffers as the kernel typed them: every view of workgroup bytes,
        and every allocation no view was taken of."""
        viewed = {id(view.memory) for view in self.views}
        return [buf for buf in self.shared if id(buf.memory) not in viewed] + self.views

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
        width = instruction_bytes(row_bytes, elem_bytes, alignment)
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
            location=location_of(op),
            kind=kind,
            buffer=buf.name,
            block=linear_block(self.block_id, self.launch.grid),
            instruction_bytes=width,
            instructions=num_instructions,
            bytes_per_thread=int(np.prod(vshape, dtype=np.int64)) * elem_bytes,
        )
        if buf.space == "global":
            sectors = sector_counts(warps, addresses, width, self.launch.num_warps)
            for w in np.unique(warps):
                self.report.global_accesses.append(GlobalAccess(warp=int(w), sectors=int(sectors[w]), **common))
            return
        lanes = self.lane_of_thread[active]
        wave, ideal = bank_wavefronts(
            warps, lanes, addresses, width, self.launch.num_warps, self.launch.threads_per_warp, kind
        )
        moved = distinct_elements(warps, offsets[active], self.launch.num_warps) * elem_bytes
        for w in np.unique(warps):
            self.report.shared_accesses.append(
                SharedAccess(
                    warp=int(w), wavefronts=int(wave[w]), ideal_wavefronts=int(ideal[w]), bytes=int(moved[w]), **common
                )
            )

    # ---- race detection (per byte of the allocation: views of the same bytes race)

    def _places(self, buf: Buffer, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the bytes of the elements at ``offsets`` in ``buf``'s allocation, each byte's warp bit)."""
        return buf.byte_places(offsets), np.repeat(self._warp_bits(offsets), buf.elem.mem_bytes)

    def track_read(self, op, buf: Buffer, offsets: np.ndarray) -> None:
        tracking = buf.race_tracking()
        places, warp_bits = self._places(buf, offsets)
        self._check_in_flight(op, "read-before-async-wait", buf, places, warp_bits)
        self._check_initialized(buf, places, "read of")
        writers = tracking.writers[places]
        racing = ((writers & ~warp_bits) != 0) & ((writers & warp_bits) == 0)
        if racing.any():
            self.race(op, "read-after-write", buf, places, warp_bits, writers & ~warp_bits, racing)
        self._check_atomics(op, "read-after-atomic", buf, places, warp_bits)
        np.bitwise_or.at(tracking.readers, places, warp_bits)

    def track_atomic(self, op, buf: Buffer, offsets: np.ndarray) -> None:
        """An atomic read-modify-write of workgroup memory: it races with other warps' plain
        reads and writes since the last barrier, not with their atomics."""
        tracking = buf.race_tracking()
        places, warp_bits = self._places(buf, offsets)
        self._check_in_flight(op, "atomic-before-async-wait", buf, places, warp_bits)
        self._check_initialized(buf, places, "atomic on")
        for kind, bits in (
            ("atomic-after-write", tracking.writers[places]),
            ("atomic-after-read", tracking.readers[places]),
        ):
            others = bits & ~warp_bits
            if (others != 0).any():
                self.race(op, kind, buf, places, warp_bits, others, others != 0)
        np.bitwise_or.at(tracking.atomics, places, warp_bits)

    def _check_initialized(self, buf: Buffer, places: np.ndarray, what: str) -> None:
        tracking = buf.race_tracking()
        if self.launch.check_uninitialized and not tracking.initialized[places].all():
            bad = places[~tracking.initialized[places]][0]
            raise MemoryAccessError(
                f"{what} uninitialised workgroup memory {buf.name} element {list(buf.multi_index(buf.element_at(int(bad))))}"
            )

    def _check_atomics(self, op, kind: str, buf: Buffer, places: np.ndarray, warp_bits: np.ndarray) -> None:
        others = buf.race_tracking().atomics[places] & ~warp_bits
        if (others != 0).any():
            self.race(op, kind, buf, places, warp_bits, others, others != 0)

    def track_write(self, op, buf: Buffer, offsets: np.ndarray, values: np.ndarray) -> None:
        tracking = buf.race_tracking()
        flat = offsets.ravel()
        places, warp_bits = self._places(buf, offsets)
        self._check_in_flight(op, "write-before-async-wait", buf, places, warp_bits)
        new_bits = buf.elem.to_bits(values).ravel()
        self._check_atomics(op, "write-after-atomic", buf, places, warp_bits)
        readers = tracking.readers[places] & ~warp_bits
        if (readers != 0).any():
            self.race(op, "write-after-read", buf, places, warp_bits, readers, readers != 0)
        other_writers = tracking.writers[places] & ~warp_bits
        differs = np.repeat(buf.elem.to_bits(buf.data[flat]).ravel() != new_bits, buf.elem.mem_bytes)
        racing = (other_writers != 0) & differs
        if racing.any():
            self.race(op, "write-after-write", buf, places, warp_bits, other_writers, racing)
        self._check_clash(op, buf, flat, new_bits, warp_bits[:: buf.elem.mem_bytes])
        np.bitwise_or.at(tracking.writers, places, warp_bits)
        tracking.initialized[places] = True

    def _check_clash(self, op, buf: Buffer, flat: np.ndarray, new_bits: np.ndarray, warp_bits: np.ndarray) -> None:
        """Threads of one store writing different values to one element."""
        order = np.argsort(flat, kind="stable")
        same = flat[order][1:] == flat[order][:-1]
        clash = same & (new_bits[order][1:] != new_bits[order][:-1])
        if clash.any():
            mask = np.zeros(len(flat), bool)
            mask[order[1:][clash]] = True
            others = np.zeros(len(flat), np.uint64)
            others[order[1:][clash]] = warp_bits[order[:-1][clash]]
            size = buf.elem.mem_bytes
            self.race(
                op,
                "write-after-write",
                buf,
                buf.byte_places(flat),
                np.repeat(warp_bits, size),
                np.repeat(others, size),
                np.repeat(mask, size),
            )

    def _check_in_flight(self, op, kind: str, buf: Buffer, places: np.ndarray, warp_bits: np.ndarray) -> None:
        """An access to a byte that a ``cp.async`` has not yet delivered (its group not
        waited for) is a race, whichever warp issued the copy."""
        pending = buf.race_tracking().in_flight[places]
        if (pending != 0).any():
            self.race(op, kind, buf, places, warp_bits, pending, pending != 0)

    def _warp_bits(self, offsets: np.ndarray) -> np.ndarray:
        """Bit ``1 << warp`` for each element access, flattened like ``offsets``."""
        warps = self.warp_of_thread[self.active].astype(np.uint64)
        per_thread = np.left_shift(np.uint64(1), warps)
        return np.broadcast_to(per_thread.reshape((-1,) + (1,) * (offsets.ndim - 1)), offsets.shape).ravel()

    def race(self, op, kind, buf, places, warp_bits, other_bits, racing) -> None:
        """Report (or raise, per ``on_race``) the race at the bytes ``places`` where ``racing``."""
        i = int(np.argmax(racing))
        race = Race(
            kind=kind,
            buffer=buf.name,
            element=buf.multi_index(buf.element_at(int(places[i]))),
            warp=int(warp_bits[i]).bit_length() - 1,
            other_warps=tuple(w for w in range(self.launch.num_warps) if int(other_bits[i]) >> w & 1),
            op=op.name,
            location=location_of(op),
            block=linear_block(self.block_id, self.launch.grid),
            interval=self.interval,
            elements=max(1, int(np.count_nonzero(racing)) // buf.elem.mem_bytes),
        )
        if self.launch.on_race == "raise":
            error = RaceError(str(race))
            error.located = True
            error.race = race
            raise error
        self.report.races.append(race)


@dataclasses.dataclass(frozen=True)
class AsyncCopy:
    """One ``cp.async`` of one op execution: ``values`` land in ``buf`` at flat ``offsets``
    (both (copies,) arrays) for the threads in ``threads`` when its group is waited for."""

    op: Any
    buf: Buffer
    offsets: np.ndarray
    values: np.ndarray
    threads: np.ndarray


@dataclasses.dataclass
class AsyncCopies:
    """The block's ``cp.async`` state: the copies issued since the last ``commit_group``
    (``open``), and the committed groups not yet waited for, oldest first."""

    open: list[AsyncCopy] = dataclasses.field(default_factory=list)
    groups: list[list[AsyncCopy]] = dataclasses.field(default_factory=list)


def _static_layout(t: ir.MemRefType):
    """(elem, shape, strides, offset, elements spanned) of a static workgroup memref type."""
    if not t.has_static_shape:
        raise UnsupportedOp(f"workgroup memref {t} must have a static shape")
    elem = elem_of(t)
    shape = tuple(t.shape)
    strides, offset = memref_layout(t, shape)
    size = offset + sum((d - 1) * s for d, s in zip(shape, strides)) + 1 if all(shape) else 0
    return elem, shape, strides, offset, size


def linear_block(block_id, grid) -> int:
    return block_id[0] + grid[0] * (block_id[1] + grid[1] * block_id[2])


def per_thread(ex: Machine, array: np.ndarray, vshape: tuple[int, ...]) -> np.ndarray:
    """Broadcast a per-thread-invariant array of shape ``vshape`` to all threads."""
    return np.broadcast_to(array, (ex.num_threads,) + vshape)


def bitcast(ex, op):
    """arith.bitcast and vector.bitcast: reinterpret bits, regrouping the last vector dimension."""
    (x,) = ex.operands(op)
    source, target = elem_of(op.operands[0].type), result_elem(op)
    if source.width % 8 or target.width % 8:
        raise UnsupportedOp(f"bitcast between {source.name} and {target.name}: widths must be multiples of 8")
    bits = source.to_bits(x)
    if bits.ndim == 1:
        bits = bits.reshape(-1, 1)
        regrouped = bits.view(target.bits_dtype).reshape(-1)
    else:
        regrouped = np.ascontiguousarray(bits).view(target.bits_dtype)
    return [target.from_bits(regrouped).reshape((ex.num_threads,) + vector_shape(op.results[0].type))]


def float_op(compute):
    def handler(ex, op):
        args = ex.operands(op)
        return [result_elem(op).wrap(compute(*args))]

    return handler
