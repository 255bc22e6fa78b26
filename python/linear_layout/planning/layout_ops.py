"""The predicted cost of the layout work that is not a conversion: ``tt.reduce``, ``tt.scan``,
``tt.gather``, ``tt.histogram`` and the atomics, from the operand's layout, by the decisions
the SIMT patterns (``patterns/reduce.py``, ``scan.py``, ``gather.py``, ``histogram.py``,
``atomics.py``) make:

* **reduce** along ``axis``: the registers along it are combined in each thread (no cost);
  ``log2(lanes along it)`` butterfly rounds of one ``shuffle xor`` per accumulator and 32-bit
  word; when warps lie along it, every thread stores its partial of each result register at
  ``flat(result element) * P + warp position`` (``P`` warp positions; per operand a block of
  ``result elements * P`` slots), one barrier, and loads the ``P`` partials back;
* **scan**: per axis bit, a register step (free), a lane step (one shuffle per register and
  word) or a warp step at axis bit ``k`` (store the total of each register starting an aligned
  block of ``2**k`` in the block's slot, barrier, load the partner block's at ``slot ^
  stride``; a region of ``elements >> k`` slots per step and operand);
* **gather**: the source is stored at its elements, a barrier, then one load per index register
  (at an address the indices choose: the load wavefronts depend on the data);
* **histogram**: each result register zeroes its bin (an i32 slot), a barrier, one shared
  ``atomic_rmw addi`` per operand register (not modelled in wavefronts), a barrier, each result
  register loads its bin;
* **atomic**: one atomic per element a thread holds (no shuffle); where the result is used and lanes or
  warps hold copies, the old values' broadcast through scratch (a store, a barrier, a load per register).

Wavefronts follow the interpreter's bank model (``simt/banks.py``): per warp, instruction and
phase (``core.hardware.lane_phases``), the most distinct 4-byte words in one bank; ``ideal`` is
``ceil(distinct words / 32)`` per phase, and the floor ``ceil(stored bytes / 128) +
ceil(loaded bytes / 128)`` (distinct bytes per warp access, summed). Shuffles are per warp.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ..core.hardware import BANK_BYTES, NUM_BANKS, WAVEFRONT_BYTES, lane_phases
from ..core.layout import LinearLayout

__all__ = [
    "OpCost",
    "WarpLocalGather",
    "atomic_cost",
    "gather_cost",
    "histogram_cost",
    "reduce_cost",
    "scan_cost",
    "scratch_bits",
    "warp_local_gather",
]

#: A warp access: ``(warp, lane) -> byte address`` (every lane accesses).
_Addresses = Callable[[int, int], int]


@dataclass(frozen=True)
class OpCost:
    """The predicted cost of one op per CTA: ``shuffles`` per warp, ``barriers``,
    ``scratch_bytes`` (its pooled shared buffer), store/load wavefronts, ``ideal`` (the
    per-access minimum), the distinct bytes stored and loaded (``floor``: their wavefronts),
    ``atomics`` (global) and ``shared_atomics`` per thread, and ``data_dependent``: the load wavefronts depend on the data
    (a gather; ``load_wavefronts`` is then the ideal)."""

    shuffles: int = 0
    barriers: int = 0
    scratch_bytes: int = 0
    store_wavefronts: int = 0
    load_wavefronts: int = 0
    ideal: int = 0
    store_bytes: int = 0
    load_bytes: int = 0
    atomics: int = 0
    shared_atomics: int = 0  # a histogram's counts on shared memory
    data_dependent: bool = False
    scalar: bool = False  # an atomic on a scalar: one for the program

    @property
    def wavefronts(self) -> int:
        return self.store_wavefronts + self.load_wavefronts

    @property
    def floor(self) -> int:
        return -(-self.store_bytes // WAVEFRONT_BYTES) + -(-self.load_bytes // WAVEFRONT_BYTES)

    def summary(self) -> str:
        """One line: ``shuffles=.. scratch=..B barriers=.. wavefronts=.. (floor ..)``."""
        if self.scalar:
            return "one atomic for the program; no shuffle, no shared memory"
        if self.atomics and not self.scratch_bytes:
            return f"{self.atomics} atomic(s) per thread; no shuffle, no shared memory"
        waves = f"wavefronts={self.wavefronts} (floor {self.floor}, ideal {self.ideal})"
        if self.data_dependent:
            waves = f"wavefronts={self.store_wavefronts} stored + loads as the indices fall (ideal {self.ideal})"
        shared = f" shared atomics={self.shared_atomics}/thread" if self.shared_atomics else ""
        line = f"shuffles={self.shuffles}/warp scratch={self.scratch_bytes}B barriers={self.barriers}{shared} {waves}"
        return f"{self.atomics} atomic(s) per thread, old values to the copies: {line}" if self.atomics else line


@dataclass(frozen=True)
class _Warps:
    """The launch: warps and lanes."""

    num_warps: int
    threads_per_warp: int


def _element(layout: LinearLayout, register: int, lane: int, warp: int) -> tuple[int, ...]:
    inputs = {"register": register, "lane": lane, "warp": warp}
    values = layout.apply({dim: inputs.get(dim, 0) for dim in layout.get_in_dim_names()})
    return tuple(values[dim] for dim in layout.get_out_dim_names())


def _flat(element: Sequence[int], shape: Sequence[int]) -> int:
    index = 0
    for coordinate, size in zip(element, shape):
        index = index * size + coordinate
    return index


def _words(bits: int) -> int:
    return max(1, -(-bits // 32))


def scratch_bits(operand_bits: Sequence[int]) -> int:
    """The scratch element of a combine through shared memory: the operand's own width for one
    operand, 32 bits for several (the patterns' ``scratch_element``)."""
    return operand_bits[0] if len(operand_bits) == 1 else 32


@dataclass(frozen=True)
class _Side:
    wavefronts: int
    ideal: int
    bytes: int


def _access(
    warps: _Warps, address: _Addresses, element_bytes: int, kind: str, lanes: Sequence[int] | None = None
) -> _Side:
    """One instruction executed by every warp, ``lanes`` active (None: all): ``address(warp, lane)``."""
    active = range(warps.threads_per_warp) if lanes is None else lanes
    all_phases = lane_phases(element_bytes, warps.threads_per_warp, kind)
    phases = [all_phases[lane] for lane in active]
    wavefronts = ideal = moved = 0
    for warp in range(warps.num_warps):
        addresses = [address(warp, lane) for lane in active]
        moved += len({a + b for a in set(addresses) for b in range(element_bytes)})
        for phase in set(phases):
            words = {
                (a + b) // BANK_BYTES
                for a, p in zip(addresses, phases)
                if p == phase
                for b in range(0, element_bytes, BANK_BYTES)
            }
            per_bank: dict[int, int] = {}
            for word in words:
                per_bank[word % NUM_BANKS] = per_bank.get(word % NUM_BANKS, 0) + 1
            wavefronts += max(per_bank.values())
            ideal += -(-len(words) // NUM_BANKS)
    return _Side(wavefronts, ideal, moved)


def _total(sides: Sequence[_Side]) -> _Side:
    return _Side(sum(s.wavefronts for s in sides), sum(s.ideal for s in sides), sum(s.bytes for s in sides))


def _shared_cost(
    stores: Sequence[_Side],
    loads: Sequence[_Side],
    *,
    barriers: int,
    scratch_bytes: int,
    shuffles: int = 0,
    data_dependent: bool = False,
) -> OpCost:
    store, load = _total(stores), _total(loads)
    return OpCost(
        shuffles=shuffles,
        barriers=barriers,
        scratch_bytes=scratch_bytes,
        data_dependent=data_dependent,
        store_wavefronts=store.wavefronts,
        load_wavefronts=load.wavefronts,
        ideal=store.ideal + load.ideal,
        store_bytes=store.bytes,
        load_bytes=load.bytes,
    )


def _moving(layout: LinearLayout, dim: str, axis: int) -> tuple[int, ...]:
    if not layout.has_in_dim(dim):
        return ()
    return tuple(b for b, basis in enumerate(dict(layout.bases)[dim]) if basis[axis])


def _accumulators(layout: LinearLayout, axis: int) -> int:
    """The distinct element keys (without the axis) of a thread's registers."""
    elements = {_element(layout, r, 0, 0) for r in range(layout.get_in_dim_size("register"))}
    return len({e[:axis] + e[axis + 1 :] for e in elements})


def reduce_cost(layout: LinearLayout, axis: int, operand_bits: Sequence[int], result: LinearLayout | None) -> OpCost:
    """The cost of a ``tt.reduce`` of operands of widths ``operand_bits`` laid out by
    ``layout`` (padded to the launch) along ``axis``, into ``result`` (None: a scalar).

    Requires: ``layout`` has register, lane and warp dimensions; ``result`` is its slice.
    Postcondition: shuffles = lane rounds * accumulators * 32-bit words; one barrier and a
    scratch of ``result elements * P`` slots per operand when ``P`` > 1 warps lie along the
    axis, nothing in shared memory otherwise.

    >>> L = LinearLayout.from_bases([("register", []), ("lane", [[0, 1], [0, 2]]), ("warp", [[1, 0]])], ["dim0", "dim1"])
    >>> reduce_cost(L, 1, [32], None).shuffles, reduce_cost(L, 1, [32], None).barriers
    (2, 0)
    """
    words = sum(_words(bits) for bits in operand_bits)
    shuffles = len(_moving(layout, "lane", axis)) * _accumulators(layout, axis) * words
    warp_bits = _moving(layout, "warp", axis)
    if not warp_bits:
        return OpCost(shuffles=shuffles)
    warps = _Warps(layout.get_in_dim_size("warp"), layout.get_in_dim_size("lane"))
    positions = 1 << len(warp_bits)
    shape = tuple(result.get_out_dim_size(d) for d in result.get_out_dim_names()) if result is not None else ()
    slots = positions
    for size in shape:
        slots *= size
    element_bytes = scratch_bits(operand_bits) // 8
    registers = result.get_in_dim_size("register") if result is not None else 1

    def base(register: int, warp: int, lane: int) -> int:
        return _flat(_element(result, register, lane, warp), shape) * positions if result is not None else 0

    def position(warp: int) -> int:
        return sum(1 << packed for packed, bit in enumerate(warp_bits) if warp >> bit & 1)

    stores, loads = [], []
    for register in range(registers):
        for k in range(len(operand_bits)):

            def stored(w: int, lane: int, r: int = register, k: int = k) -> int:
                return (base(r, w, lane) + position(w) + k * slots) * element_bytes

            stores.append(_access(warps, stored, element_bytes, "store"))
    for register in range(registers):
        for partial in range(positions):
            for k in range(len(operand_bits)):

                def loaded(w: int, lane: int, r: int = register, p: int = partial, k: int = k) -> int:
                    return (base(r, w, lane) + p + k * slots) * element_bytes

                loads.append(_access(warps, loaded, element_bytes, "load"))
    return _shared_cost(
        stores, loads, shuffles=shuffles, barriers=1, scratch_bytes=slots * len(operand_bits) * element_bytes
    )


def _shape(layout: LinearLayout) -> tuple[int, ...]:
    return tuple(layout.get_out_dim_size(d) for d in layout.get_out_dim_names())


def _axis_dims(layout: LinearLayout, axis: int) -> dict[int, tuple[str, int]]:
    """(hardware dimension, bit) of each basis moving along ``axis``, by the axis bit it sets."""
    found = {}
    for dim in ("register", "lane", "warp"):
        for bit in _moving(layout, dim, axis):
            found[dict(layout.bases)[dim][bit][axis].bit_length() - 1] = (dim, bit)
    return found


def scan_cost(layout: LinearLayout, axis: int, operand_bits: Sequence[int]) -> OpCost:
    """The cost of a ``tt.scan`` (either direction) along ``axis``: per lane bit along it one
    shuffle per register and word; per warp bit (at axis bit ``k``) a store of the block total
    of each register starting an aligned block of ``2**k`` (at its element's row-major index
    with the axis coordinate shifted right by ``k``: ``elements >> k`` slots per operand, each
    warp step its own region), a barrier, and a load of the partner block's (``slot ^ stride``).

    Requires: every basis moving along ``axis`` moves along it alone, by a power of two.
    Postcondition: one barrier per warp bit along the axis.

    >>> L = LinearLayout.from_bases([("register", [[1]]), ("lane", [[2], [4]]), ("warp", [[8]])], ["dim0"])
    >>> scan_cost(L, 0, [32]).shuffles, scan_cost(L, 0, [32]).barriers, scan_cost(L, 0, [32]).scratch_bytes
    (4, 1, 8)
    """
    registers = layout.get_in_dim_size("register")
    words = sum(_words(bits) for bits in operand_bits)
    shuffles = len(_moving(layout, "lane", axis)) * registers * words
    steps = _axis_dims(layout, axis)
    if not any(dim == "warp" for dim, _ in steps.values()):
        return OpCost(shuffles=shuffles)
    warps = _Warps(layout.get_in_dim_size("warp"), layout.get_in_dim_size("lane"))
    shape = _shape(layout)
    stride = _prod(shape[axis + 1 :])
    element_bytes = scratch_bits(operand_bits) // 8
    stores, loads = [], []
    region = 0
    for axis_bit in sorted(k for k, (dim, _) in steps.items() if dim == "warp"):
        slots = _prod(shape) >> axis_bit
        shared = sum(1 << bit for k, (dim, bit) in steps.items() if dim == "register" and k < axis_bit)
        block_shape = tuple(size >> axis_bit if d == axis else size for d, size in enumerate(shape))

        def slot(r: int, w: int, lane: int, b: int = axis_bit, s: tuple[int, ...] = block_shape) -> int:
            element = _element(layout, r, lane, w)
            return _flat(tuple(c >> b if d == axis else c for d, c in enumerate(element)), s)

        for register in (r for r in range(registers) if not r & shared):
            for k in range(len(operand_bits)):
                base = region + k * slots

                def stored(w: int, lane: int, r: int = register, base: int = base) -> int:
                    return (base + slot(r, w, lane)) * element_bytes

                def loaded(w: int, lane: int, r: int = register, base: int = base) -> int:
                    return (base + (slot(r, w, lane) ^ stride)) * element_bytes

                stores.append(_access(warps, stored, element_bytes, "store"))
                loads.append(_access(warps, loaded, element_bytes, "load"))
        region += slots * len(operand_bits)
    barriers = sum(1 for dim, _ in steps.values() if dim == "warp")
    return _shared_cost(stores, loads, shuffles=shuffles, barriers=barriers, scratch_bytes=region * element_bytes)


def _prod(sizes: Sequence[int]) -> int:
    total = 1
    for size in sizes:
        total *= size
    return total


def _element_addresses(
    layout: LinearLayout, element_bytes: int, place: Callable[[tuple[int, ...]], int]
) -> list[_Addresses]:
    """Per register, the warp access at the place of its element."""

    def at(register: int) -> _Addresses:
        return lambda w, lane: place(_element(layout, register, lane, w)) * element_bytes

    return [at(register) for register in range(layout.get_in_dim_size("register"))]


def _stores_at_elements(
    layout: LinearLayout, element_bytes: int, place: Callable[[tuple[int, ...]], int]
) -> list[_Side]:
    warps = _Warps(layout.get_in_dim_size("warp"), layout.get_in_dim_size("lane"))
    return [
        _access(warps, address, element_bytes, "store") for address in _element_addresses(layout, element_bytes, place)
    ]


@dataclass(frozen=True)
class WarpLocalGather:
    """A ``tt.gather`` inside each warp, Triton's ``emitWarpLocalGather``: the source bases that
    move along the axis are ``lane_steps`` and ``register_steps``, ``(axis bit, hardware bit)``
    each; the element at axis coordinate ``v`` of a row is in lane ``(lane & ~lane_mask) | v's
    lane bits`` and register ``(register & ~register_mask) | v's register bits`` of the same warp."""

    lane_steps: tuple[tuple[int, int], ...]
    register_steps: tuple[tuple[int, int], ...]

    @property
    def lane_mask(self) -> int:
        return sum(1 << bit for _, bit in self.lane_steps)

    @property
    def register_mask(self) -> int:
        return sum(1 << bit for _, bit in self.register_steps)

    def shuffles(self, registers: int) -> int:
        """Shuffles per index register set: one per candidate source register."""
        return registers << len(self.register_steps)


def _without_axis(layout: LinearLayout, axis: int) -> dict[str, tuple[tuple[int, ...], ...]]:
    return {
        dim: tuple(tuple(0 if d == axis else v for d, v in enumerate(b)) for b in bases) for dim, bases in layout.bases
    }


def warp_local_gather(source: LinearLayout, indices: LinearLayout, axis: int) -> WarpLocalGather | None:
    """The warp-local plan of a gather along ``axis`` (None: it goes through shared memory):
    every source basis with a component along the axis moves along it alone by a power of two
    and is a register or lane basis, together they cover the axis, and the source and index
    layouts agree on everything but the axis (so a thread's row is in its own warp's lanes).

    >>> rows = LinearLayout.from_bases([("register", [[1, 0]]), ("lane", [[0, 1], [0, 2]]), ("warp", [[2, 0]])], ["dim0", "dim1"])
    >>> warp_local_gather(rows, rows, 1)
    WarpLocalGather(lane_steps=((0, 0), (1, 1)), register_steps=())
    >>> warp_local_gather(rows, rows, 0) is None  # a warp moves along dim0
    True
    """
    if source.get_out_dim_names() != indices.get_out_dim_names() or _without_axis(source, axis) != _without_axis(
        indices, axis
    ):
        return None
    steps: dict[int, tuple[str, int]] = {}
    for dim, bases in source.bases:
        for bit, basis in enumerate(bases):
            along = basis[axis]
            if not along:
                continue
            if (
                dim not in ("register", "lane")
                or along & (along - 1)
                or any(v for d, v in enumerate(basis) if d != axis)
            ):
                return None
            steps[along.bit_length() - 1] = (dim, bit)
    if sorted(steps) != list(range(source.get_out_dim_size_log2(source.get_out_dim_names()[axis]))):
        return None
    lane = tuple((k, bit) for k, (dim, bit) in sorted(steps.items()) if dim == "lane")
    register = tuple((k, bit) for k, (dim, bit) in sorted(steps.items()) if dim == "register")
    return WarpLocalGather(lane, register)


def gather_cost(source: LinearLayout, indices: LinearLayout, source_bits: int, axis: int) -> OpCost:
    """The cost of a ``tt.gather`` along ``axis``. Warp-local (``warp_local_gather``): one
    ``shuffle idx`` per index register and candidate source register (and 32-bit word), no
    shared memory. Else the source stored at its elements, a barrier, one load per index
    register at an address the indices choose (``data_dependent``; ``load_wavefronts`` and the
    loaded bytes are left 0, the ideal counts the stores only)."""
    local = warp_local_gather(source, indices, axis)
    if local is not None:
        return OpCost(shuffles=local.shuffles(indices.get_in_dim_size("register")) * _words(source_bits))
    element_bytes = max(1, source_bits // 8)
    shape = _shape(source)
    stores = _stores_at_elements(source, element_bytes, lambda element: _flat(element, shape))
    return _shared_cost(stores, [], barriers=1, scratch_bytes=_prod(shape) * element_bytes, data_dependent=True)


def histogram_cost(source: LinearLayout, result: LinearLayout) -> OpCost:
    """The cost of a ``tt.histogram`` counted with shared atomics: each result register stores 0
    at its bin (an i32 slot), a barrier, one ``atomic_rmw addi`` per operand register that is
    not a repeat of another (free register bits 0), a barrier, each result register loads its
    bin. The atomics' bank cost is not modelled (their addresses are the data).

    Postcondition: two barriers, ``bins * 4`` bytes of scratch.

    >>> src = LinearLayout.from_bases([("register", [[1]]), ("lane", [[2], [4]]), ("warp", [[0]])], ["dim0"])
    >>> bins = LinearLayout.from_bases([("register", []), ("lane", [[1], [2]]), ("warp", [[0]])], ["dim0"])
    >>> cost = histogram_cost(src, bins)
    >>> cost.barriers, cost.scratch_bytes, cost.shared_atomics
    (2, 16, 2)
    """
    bins = result.get_out_dim_size(result.get_out_dim_names()[0])
    stores = _stores_at_elements(result, 4, lambda element: element[0])
    loads = [
        _access(_Warps(result.get_in_dim_size("warp"), result.get_in_dim_size("lane")), address, 4, "load")
        for address in _element_addresses(result, 4, lambda element: element[0])
    ]
    free = source.get_free_variable_masks().get("register", 0)
    atomics = sum(1 for register in range(source.get_in_dim_size("register")) if not register & free)
    cost = _shared_cost(stores, loads, barriers=2, scratch_bytes=bins * 4)
    return replace(cost, shared_atomics=atomics)


def atomic_cost(layout: LinearLayout | None, broadcast_bits: int = 0) -> OpCost:
    """One atomic per register a thread holds; one for the program on a scalar (``layout`` None).
    ``broadcast_bits`` (the result's element bits; 0: the result is unused) adds, where lanes or
    warps hold copies, the broadcast of the old values: the updating threads store each distinct
    register's value at its element (row-major), a barrier, every thread loads them back."""
    if layout is None:
        return OpCost(atomics=1, scalar=True)
    atomics = layout.get_in_dim_size("register")
    free = layout.get_free_variable_masks()
    if not broadcast_bits or not (free.get("lane", 0) or free.get("warp", 0)):
        return OpCost(atomics=atomics)
    element_bytes = max(1, broadcast_bits // 8)
    shape = _shape(layout)
    owners = [w for w in range(layout.get_in_dim_size("warp")) if not w & free.get("warp", 0)]
    registers = [r for r in range(atomics) if not r & free.get("register", 0)]
    lanes = layout.get_in_dim_size("lane")

    def place(register: int, warp: int, lane: int) -> int:
        return _flat(_element(layout, register, lane, warp), shape) * element_bytes

    def at(register: int, warps: Sequence[int]) -> _Addresses:
        """The addresses of `register` for the `i`-th warp of `warps`."""
        return lambda i, lane: place(register, warps[i], lane)

    everyone = range(layout.get_in_dim_size("warp"))
    updating = [lane for lane in range(lanes) if not lane & free.get("lane", 0)]  # the copies skip the store
    stores = [_access(_Warps(len(owners), lanes), at(r, owners), element_bytes, "store", updating) for r in registers]
    loads = [_access(_Warps(len(everyone), lanes), at(r, everyone), element_bytes, "load") for r in registers]
    cost = _shared_cost(stores, loads, barriers=1, scratch_bytes=_prod(shape) * element_bytes)
    return replace(cost, atomics=atomics)
