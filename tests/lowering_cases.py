"""Random tile-load -> convert_layout -> tile-store kernels, for the lowering tests and benchmark.

`random_pair(rng, ...)` draws a source layout and a destination layout of the same tensor,
shaped so that each strategy of the convert_layout decision tree is hit: the destination is the
source with its register bases permuted ("register"), its register and lane bases mixed inside
the warp ("warp"), or anything at all ("any", mostly needing shared memory). Layouts may
broadcast: zero register bases (duplicate registers) and zero lane/warp bases when the tensor is
smaller than the launch.
"""

from __future__ import annotations

import random

import numpy as np

from linear_layout import LinearLayout
from linear_layout.core.hardware import MAX_REGISTERS_PER_THREAD
from linear_layout.ir.bridge import format_ll_layout

#: The element types `random_case` draws from.
DTYPES = {"f32": np.float32, "f16": np.float16, "i8": np.uint8}
#: Every element type `kernel_text` and `random_input` take: numpy holds integers as unsigned
#: values of their width (pointers, `!tt.ptr<...>`, as i64), as the SIMT interpreter does.
ELEMENT_DTYPES = {
    **DTYPES,
    "f64": np.float64,
    "i1": np.uint8,
    "i16": np.uint16,
    "i32": np.uint32,
    "i64": np.uint64,
}
#: The element type that stands for an element of `bits` bits in an extracted kernel.
DTYPE_OF_BITS = {1: "i1", 8: "i8", 16: "f16", 32: "f32", 64: "i64"}


def _unit(dim: int, bit: int, rank: int) -> list[int]:
    v = [0] * rank
    v[dim] = 1 << bit
    return v


def _xor(a, b):
    return [x ^ y for x, y in zip(a, b)]


def random_layout(rng: random.Random, shape_bits: list[int], num_warps: int, zero_registers: int = 0,
                  swizzle: bool = False, threads_per_warp: int = 32) -> LinearLayout:
    rank = len(shape_bits)
    units = [_unit(d, b, rank) for d in range(rank) for b in range(shape_bits[d])]
    rng.shuffle(units)
    if swizzle:  # an invertible mix keeps the layout surjective
        for _ in range(rng.randint(1, 3)):
            i, j = rng.sample(range(len(units)), 2) if len(units) > 1 else (0, 0)
            if i != j:
                units[i] = _xor(units[i], units[j])
    warp_bits = num_warps.bit_length() - 1
    slots = {"lane": threads_per_warp.bit_length() - 1, "warp": warp_bits}
    bases = {"register": [], "lane": [], "warp": []}
    # Fill lanes and warps from a random position in the list; zeros when the tensor is small.
    order = ["lane", "warp"]
    rng.shuffle(order)
    for dim in order:
        for _ in range(slots[dim]):
            if units and rng.random() < 0.9:
                bases[dim].append(units.pop(rng.randrange(len(units))) if rng.random() < 0.3 else units.pop(0))
            else:
                bases[dim].append([0] * rank)
    bases["register"] = units
    for _ in range(zero_registers):
        bases["register"].insert(rng.randint(0, len(bases["register"])), [0] * rank)
    # Unused tensor bits would make the layout non-surjective: none are left (all went somewhere).
    return LinearLayout.from_bases([(d, bases[d]) for d in ("register", "lane", "warp")],
                                   [f"dim{k}" for k in range(rank)], [1 << b for b in shape_bits])


def derive(rng: random.Random, src: LinearLayout, mode: str, num_warps: int, zero_registers: int) -> LinearLayout:
    bases = {d: [list(b) for b in v] for d, v in src.bases}
    rank = src.num_out_dims
    lane_bits = len(bases["lane"])
    regs = [b for b in bases["register"] if any(b)]
    if mode == "register":
        rng.shuffle(regs)
        bases["register"] = regs
    elif mode == "warp":
        pool = regs + bases["lane"]
        rng.shuffle(pool)
        if len(pool) > 1 and rng.random() < 0.5:
            i, j = rng.sample(range(len(pool)), 2)
            if any(pool[j]):
                pool[i] = _xor(pool[i], pool[j]) if any(_xor(pool[i], pool[j])) else pool[i]
        bases["lane"] = pool[:lane_bits]
        bases["register"] = [b for b in pool[lane_bits:] if any(b)]
        # a zero lane basis taken into the registers is dropped; pad the lanes again
        while len(bases["lane"]) < lane_bits:
            bases["lane"].append([0] * rank)
    else:
        shape_bits = [s.bit_length() - 1 for _, s in src.out_dims]
        return random_layout(rng, shape_bits, num_warps, zero_registers, swizzle=rng.random() < 0.3,
                             threads_per_warp=1 << lane_bits)
    for _ in range(zero_registers):
        bases["register"].insert(rng.randint(0, len(bases["register"])), [0] * rank)
    layout = LinearLayout.from_bases([(d, bases[d]) for d in ("register", "lane", "warp")],
                                     list(src.get_out_dim_names()), [s for _, s in src.out_dims],
                                     require_surjective=False)
    if not layout.is_surjective():  # an xor made two bases equal: fall back to a pure permutation
        return derive(rng, src, mode if mode != "warp" else "register", num_warps, zero_registers)
    return layout


def random_case(seed: int, threads_per_warp: int = 32):
    """(src, dst, dtype name, num_warps, mode) drawn from `seed`, for warps of `threads_per_warp` lanes.

    A draw whose layouts need more registers per thread than a thread has (the lowering refuses
    those with a user error, tested in test_driver_errors) is redrawn from the same generator.
    """
    rng = random.Random(seed)
    while True:
        case = _draw_case(rng, threads_per_warp)
        src, dst = case[0], case[1]
        if max(src.get_in_dim_size("register"), dst.get_in_dim_size("register")) <= MAX_REGISTERS_PER_THREAD:
            return case


def _draw_case(rng: random.Random, threads_per_warp: int):
    num_warps = rng.choice([1, 2, 4, 8])
    rank = rng.randint(1, 3)
    lane_bits = threads_per_warp.bit_length() - 1
    total = rng.randint(max(1, lane_bits - 2 + (num_warps.bit_length() - 1)), lane_bits + (num_warps.bit_length() - 1) + 3)
    shape_bits = [0] * rank
    for _ in range(total):
        shape_bits[rng.randrange(rank)] += 1
    dtype = rng.choice(list(DTYPES))
    mode = rng.choice(["register", "warp", "warp", "warp", "any"])
    src = random_layout(rng, shape_bits, num_warps, rng.choice([0, 0, 1]), swizzle=rng.random() < 0.2,
                        threads_per_warp=threads_per_warp)
    dst = derive(rng, src, mode, num_warps, rng.choice([0, 0, 1]))
    return src, dst, dtype, num_warps, mode


def kernel_text(src: LinearLayout, dst: LinearLayout, dtype: str, num_warps: int, name: str = "cvt",
                encodings: tuple[str, str] | None = None, threads_per_warp: int = 32) -> str:
    shape = [s for _, s in src.out_dims]
    memref = f"memref<{'x'.join(map(str, shape))}x{dtype}>"
    a, b = encodings or (format_ll_layout(src), format_ll_layout(dst))
    tensor_a = f"tensor<{'x'.join(map(str, shape))}x{dtype}, {a}>"
    tensor_b = f"tensor<{'x'.join(map(str, shape))}x{dtype}, {b}>"
    return f"""module attributes {{"ttg.num-warps" = {num_warps} : i32, "ttg.threads-per-warp" = {threads_per_warp} : i32}} {{
  func.func @{name}(%in: {memref}, %out: {memref}) {{
    %x = "ll.load"(%in) : ({memref}) -> {tensor_a}
    %y = "ttg.convert_layout"(%x) : ({tensor_a}) -> {tensor_b}
    "ll.store"(%y, %out) : ({tensor_b}, {memref}) -> ()
    return
  }}
}}
"""


def random_input(shape, dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    numpy_type = np.dtype(ELEMENT_DTYPES[dtype])
    if dtype == "i1":
        return rng.integers(0, 2, size=shape, dtype=np.uint8)
    if numpy_type.kind == "u":
        return rng.integers(0, np.iinfo(numpy_type).max, size=shape, dtype=numpy_type, endpoint=True)
    return rng.standard_normal(size=shape).astype(numpy_type)


def assert_placed_as_the_encoding_says(report, shared, shape, x):
    """The bytes in shared memory sit where the shared encoding puts each element: offset ``o`` of
    the allocation holds element ``L(o)`` of the tensor (``L = shared.to_linear_layout(shape)``), so
    a lowering that placed data row-major, or swizzled differently, fails even when its round trip
    and its bank cost are right."""
    (buffer,) = [b for b in report.workgroup_buffers if b.data.size == x.size]
    layout = shared if isinstance(shared, LinearLayout) else shared.to_linear_layout(list(shape))
    coordinates = layout.tabulate()[: x.size]  # offsets of block 0
    expected = x[tuple(coordinates.T)]
    assert np.array_equal(buffer.data.view(np.uint8), expected.view(np.uint8)), str(shared)
