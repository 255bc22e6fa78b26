"""Print a layout, where one hardware slot lands, and the inverse map.

The layout is the seed document's 32x32 blocked GEMM layout,
``#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>``.
"""

from linear_layout import LinearLayout

blocked = LinearLayout.from_bases(
    [
        ("register", [[4, 0], [8, 0], [16, 0]]),
        ("lane", [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]),
        ("warp", [[1, 0], [2, 0]]),
        ("block", []),
    ],
    ["dim0", "dim1"],
)

print("Layout (register, lane, warp, block) -> (dim0, dim1):", blocked)
print()
slot = {"register": 5, "lane": 3, "warp": 2, "block": 0}
print(f"{slot} holds element {blocked.apply(slot)}")
print()
print("Inverse (dim0, dim1) -> (register, lane, warp, block):", blocked.invert())
print()
print("Which thread holds each element (T<thread>:<register>):")
print(blocked.get_distributed_view(False))
