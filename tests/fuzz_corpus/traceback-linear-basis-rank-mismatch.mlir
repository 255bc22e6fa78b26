// ARGS: ["-p", "builtin.module(func.func(ll-to-simt), reconcile-unrealized-casts)", "--split-input-file"]
// FOUND: 'odings/syntax.py", line 232, in _value File "/work/main/python/linear_layout/encodings/syntax.py", line 309, in attribute File "/work/main/python/linear_layout/encodings/syntax.py", line 163, in _buil'
// Register permutation: the two register bases swap.
#a = #ttg.linear<{register = [[0, 1], [1, 0]], lane = [[0, 2], [0, 4], [0, 8], [0, 16], [2, 0]], warp = [], block = []}>
#b = #ttg.linear<{register = [[1, 0], [0, 1]], lane = [[0, 2], [], [0, 8], [0, 16], [2, 0]], warp = [], block = []}>
module attributes {"ttg.num-warps" = 1 : i32} {
  func.func @permute(%in: memref<4x32xf16>, %out: memref<4x32xf16>) {
    %x = "ll.load"(%in) : (memref<4x32xf16>) -> tensor<4x32xf16, #a>
    %y = "ttg.convert_layout"(%x) : (tensor<4x32xf16, #a>) -> tensor<4x32xf16, #b>
    "ll.store"(%y, %out) : (tensor<4x32xf16, #b>, memref<4x32xf16>) -> ()
    return
  }
}

// CHECK-LABEL: gpu.func @permute(
// CHECK: %[[A:.*]] = vector.load %arg0{{.*}} : memref<4x32xf16>, vector<2xf16>
// CHECK: %[[B:.*]] = vector.load %arg0{{.*}} : memref<4x32xf16>, vector<2xf16>
// The two loaded f16 pairs are joined as packed i32 units, then permuted.
// CHECK: %[[PA:.*]] = vector.bitcast %[[A]] : vector<2xf16> to vector<1xi32>
// CHECK: %[[PB:.*]] = vector.bitcast %[[B]] : vector<2xf16> to vector<1xi32>
// CHECK: %[[P:.*]] = vector.from_elements %{{.*}}, %{{.*}} : vector<2xi32>
// CHECK: %[[X:.*]] = vector.bitcast %[[P]] : vector<2xi32> to vector<4xf16>
// CHECK: %[[Y:.*]] = vector.shuffle %[[X]], %[[X]] [0, 2, 1, 3] : vector<4xf16>, vector<4xf16>
// CHECK-NOT: gpu.shuffle
// CHECK: memref.store
// LOWER-LABEL: gpu.func @permute(
// LOWER-NOT: gpu.shuffle
