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
  word) or a warp step (store every register's total at its element, barrier, load the
  partner's at ``flat ^ 2**bit * stride``, barrier);
* **gather**: the source is stored at its elements, a barrier, then one load per index register
  (at an address the indices choose: the load wavefronts depend on the data);
* **histogram**: the operand is stored at its elements (i32), a barrier, then each result
  register loads every slot (all lanes at one address: one wavefront each);
* **atomic**: one atomic per element a thread holds (no shuffle, no shared memory).

Wavefronts follow the interpreter's bank model (``simt/banks.py``): per warp, instruction and
phase (``core.hardware.lane_phases``), the most distinct 4-byte words in one bank; ``ideal`` is
``ceil(distinct words / 32)`` per phase, and the floor ``ceil(stored bytes / 128) +
ceil(loaded bytes / 128)`` (distinct bytes per warp access, summed). Shuffles are per warp.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..core.hardware import BANK_BYTES, NUM_BANKS, WAVEFRONT_BYTES, lane_phases
from ..core.layout import LinearLayout
from .plan import MAX_PLANNED_REGISTERS

__all__ = [
    "OpCost",
    "atomic_cost",
    "gather_cost",
    "histogram_cost",
    "reduce_cost",
    "scan_cost",
    "scratch_bits",
]

#: A warp access: ``(warp, lane) -> byte address`` (every lane accesses).
_Addresses = Callable[[int, int], int]


@dataclass(frozen=True)
class OpCost:
    """The predicted cost of one op per CTA: ``shuffles`` per warp, ``barriers``,
    ``scratch_bytes`` (its pooled shared buffer), store/load wavefronts, ``ideal`` (the
    per-access minimum), the distinct bytes stored and loaded (``floor``: their wavefronts),
    ``atomics`` per thread, and ``data_dependent``: the load wavefronts depend on the data
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
        if self.atomics:
            return f"{self.atomics} atomic(s) per thread; no shuffle, no shared memory"
        waves = f"wavefronts={self.wavefronts} (floor {self.floor}, ideal {self.ideal})"
        if self.data_dependent:
            waves = f"wavefronts={self.store_wavefronts} stored + loads as the indices fall (ideal {self.ideal})"
        return f"shuffles={self.shuffles}/warp scratch={self.scratch_bytes}B barriers={self.barriers} {waves}"


@dataclass(frozen=True)
class _Warps:
    """The launch: warps and lanes."""

    num_warps: int
    threads_per_warp: int


def _check_registers(*layouts: LinearLayout | None) -> None:
    """Raise ValueError when a layout holds more registers per thread than the planner plans
    (``MAX_PLANNED_REGISTERS``; Triton would spill): the costs enumerate every register, and a
    tensor of 2**31 elements in a 256-element layout would take hours (found by the fuzzer)."""
    for layout in layouts:
        registers = layout.get_in_dim_size("register") if layout is not None else 0
        if registers > MAX_PLANNED_REGISTERS:
            raise ValueError(
                f"{registers} registers per thread, more than the {MAX_PLANNED_REGISTERS} the cost model enumerates"
            )


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


def _access(warps: _Warps, address: _Addresses, element_bytes: int, kind: str) -> _Side:
    """One instruction executed by every warp (all lanes active): ``address(warp, lane)``."""
    phases = lane_phases(element_bytes, warps.threads_per_warp, kind)
    wavefronts = ideal = moved = 0
    for warp in range(warps.num_warps):
        addresses = [address(warp, lane) for lane in range(warps.threads_per_warp)]
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
    _check_registers(layout, result)
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


def scan_cost(layout: LinearLayout, axis: int, operand_bits: Sequence[int]) -> OpCost:
    """The cost of a ``tt.scan`` (either direction) along ``axis``: per lane bit along it one
    shuffle per register and word; per warp bit a store of every register's total, a barrier,
    a load of the partner's and a barrier.

    >>> L = LinearLayout.from_bases([("register", [[1]]), ("lane", [[2], [4]]), ("warp", [[8]])], ["dim0"])
    >>> scan_cost(L, 0, [32]).shuffles, scan_cost(L, 0, [32]).barriers, scan_cost(L, 0, [32]).scratch_bytes
    (4, 2, 64)
    """
    _check_registers(layout)
    registers = layout.get_in_dim_size("register")
    words = sum(_words(bits) for bits in operand_bits)
    shuffles = len(_moving(layout, "lane", axis)) * registers * words
    warp_steps = [dict(layout.bases)["warp"][b][axis] for b in _moving(layout, "warp", axis)]
    if not warp_steps:
        return OpCost(shuffles=shuffles)
    warps = _Warps(layout.get_in_dim_size("warp"), layout.get_in_dim_size("lane"))
    shape = _shape(layout)
    slots = 1
    for size in shape:
        slots *= size
    stride = _prod(shape[axis + 1 :])
    element_bytes = scratch_bits(operand_bits) // 8
    stores, loads = [], []
    for step in warp_steps:
        for register in range(registers):
            for k in range(len(operand_bits)):

                def stored(w: int, lane: int, r: int = register, k: int = k) -> int:
                    return (_flat(_element(layout, r, lane, w), shape) + k * slots) * element_bytes

                def loaded(w: int, lane: int, r: int = register, k: int = k, s: int = step) -> int:
                    return ((_flat(_element(layout, r, lane, w), shape) ^ s * stride) + k * slots) * element_bytes

                stores.append(_access(warps, stored, element_bytes, "store"))
                loads.append(_access(warps, loaded, element_bytes, "load"))
    return _shared_cost(
        stores,
        loads,
        shuffles=shuffles,
        barriers=2 * len(warp_steps),
        scratch_bytes=slots * len(operand_bits) * element_bytes,
    )


def _prod(sizes: Sequence[int]) -> int:
    total = 1
    for size in sizes:
        total *= size
    return total


def _stores_at_elements(
    layout: LinearLayout, element_bytes: int, place: Callable[[tuple[int, ...]], int]
) -> list[_Side]:
    warps = _Warps(layout.get_in_dim_size("warp"), layout.get_in_dim_size("lane"))
    sides = []
    for register in range(layout.get_in_dim_size("register")):

        def stored(w: int, lane: int, r: int = register) -> int:
            return place(_element(layout, r, lane, w)) * element_bytes

        sides.append(_access(warps, stored, element_bytes, "store"))
    return sides


def gather_cost(source: LinearLayout, indices: LinearLayout, source_bits: int) -> OpCost:
    """The cost of a ``tt.gather``: the source stored at its elements, a barrier, one load per
    index register at an address the indices choose (``data_dependent``; ``load_wavefronts``
    and the loaded bytes are left 0, the ideal counts the stores only)."""
    _check_registers(source, indices)
    element_bytes = max(1, source_bits // 8)
    shape = _shape(source)
    stores = _stores_at_elements(source, element_bytes, lambda element: _flat(element, shape))
    return _shared_cost(stores, [], barriers=1, scratch_bytes=_prod(shape) * element_bytes, data_dependent=True)


def histogram_cost(source: LinearLayout, result: LinearLayout) -> OpCost:
    """The cost of a ``tt.histogram``: the (1-D) operand stored as i32 at its elements, a
    barrier, then each result register loads every slot (one wavefront per load per warp)."""
    _check_registers(source, result)
    elements = source.get_out_dim_size(source.get_out_dim_names()[0])
    stores = _stores_at_elements(source, 4, lambda element: element[0])
    warps = _Warps(result.get_in_dim_size("warp"), result.get_in_dim_size("lane"))

    def slot_address(slot: int) -> _Addresses:
        return lambda warp, lane: slot * 4  # every lane reads the loop's slot

    loads = [
        _access(warps, slot_address(slot), 4, "load")
        for _ in range(result.get_in_dim_size("register"))
        for slot in range(elements)
    ]
    return _shared_cost(stores, loads, barriers=1, scratch_bytes=elements * 4)


def atomic_cost(layout: LinearLayout | None) -> OpCost:
    """One atomic per register a thread holds; one for the program on a scalar (``layout`` None)."""
    if layout is None:
        return OpCost(atomics=1, scalar=True)
    return OpCost(atomics=layout.get_in_dim_size("register"))
