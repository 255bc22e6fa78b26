// ll-to-simt: tile I/O (vectorised), elementwise ops, and each in-warp strategy of the
// convert_layout decision tree (no-op, register permutation, xor/idx warp shuffles), broadcast
// layouts. The kernels here also compile to PTX (tests/test_lowering_ptx.py).
// RUN: linear-layout-opt --split-input-file --pass-pipeline='builtin.module(ll-linearize-encodings, ll-to-simt)' %s | FileCheck %s
// RUN: linear-layout-opt --split-input-file --pass-pipeline='builtin.module(ll-lower)' %s | FileCheck %s --check-prefix=LOWER
// PTX-PIPELINE: builtin.module(ll-lower)

// Vectorised tile I/O: 4 consecutive f32 per thread along the row -> one 16-byte access.
#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  func.func @copy(%in: memref<16x32xf32>, %out: memref<16x32xf32>) {
    %x = "ll.load"(%in) : (memref<16x32xf32>) -> tensor<16x32xf32, #blocked>
    %c = arith.constant dense<2.0> : tensor<16x32xf32, #blocked>
    %y = arith.mulf %x, %c : tensor<16x32xf32, #blocked>
    %z = math.exp %y : tensor<16x32xf32, #blocked>
    "ll.store"(%z, %out) : (tensor<16x32xf32, #blocked>, memref<16x32xf32>) -> ()
    return
  }
}

// CHECK-LABEL: gpu.func @copy(
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK: gpu.thread_id x
// CHECK: %[[V:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<16x32xf32>, vector<4xf32>
// CHECK: %[[M:.*]] = arith.mulf %[[V]], %{{.*}} : vector<4xf32>
// f32 exp is Triton's: a multiply by log2(e), then one ex2.approx.f32 per register.
// CHECK: %[[L:.*]] = arith.mulf %[[M]], %{{.*}} : vector<4xf32>
// CHECK-COUNT-4: llvm.inline_asm "ex2.approx.f32 $0, $1;", "=f,f"
// CHECK: %[[E:.*]] = vector.from_elements
// CHECK: vector.store %[[E]], %arg1[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<16x32xf32>, vector<4xf32>
// CHECK: gpu.return
// LOWER-LABEL: gpu.func @copy(
// LOWER: %[[C:.*]] = arith.constant dense<2.000000e+00> : vector<4xf32>
// LOWER: %[[V:.*]] = vector.load %arg0[%[[R:.*]], %[[C1:.*]]] {alignment = 16 : i64}
// LOWER: vector.store %{{.*}}, %arg1[%[[R]], %[[C1]]] {alignment = 16 : i64}

// -----

// No-op: the same layout written two ways.
#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#linear = #ttg.linear<{register = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]], warp = [[4, 0], [8, 0]], block = []}>
module attributes {"ttg.num-warps" = 4 : i32} {
  func.func @noop(%in: memref<16x32xf32>, %out: memref<16x32xf32>) {
    %x = "ll.load"(%in) : (memref<16x32xf32>) -> tensor<16x32xf32, #blocked>
    %y = "ttg.convert_layout"(%x) : (tensor<16x32xf32, #blocked>) -> tensor<16x32xf32, #linear>
    "ll.store"(%y, %out) : (tensor<16x32xf32, #linear>, memref<16x32xf32>) -> ()
    return
  }
}

// CHECK-LABEL: gpu.func @noop(
// CHECK: %[[V:.*]] = vector.load
// CHECK-NOT: shuffle
// CHECK: vector.store %[[V]], %arg1

// -----

// Register permutation: the two register bases swap.
#a = #ttg.linear<{register = [[0, 1], [1, 0]], lane = [[0, 2], [0, 4], [0, 8], [0, 16], [2, 0]], warp = [], block = []}>
#b = #ttg.linear<{register = [[1, 0], [0, 1]], lane = [[0, 2], [0, 4], [0, 8], [0, 16], [2, 0]], warp = [], block = []}>
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

// -----

// Warp shuffle, xor mode: register bit 0 and lane bit 0 swap (one mixed transposition).
#a = #ttg.linear<{register = [[1]], lane = [[2], [4], [8], [16], [32]], warp = [], block = []}>
#b = #ttg.linear<{register = [[2]], lane = [[1], [4], [8], [16], [32]], warp = [], block = []}>
module attributes {"ttg.num-warps" = 1 : i32} {
  func.func @xor_shuffle(%in: memref<64xi8>, %out: memref<64xi8>) {
    %x = "ll.load"(%in) : (memref<64xi8>) -> tensor<64xi8, #a>
    %y = "ttg.convert_layout"(%x) : (tensor<64xi8, #a>) -> tensor<64xi8, #b>
    "ll.store"(%y, %out) : (tensor<64xi8, #b>, memref<64xi8>) -> ()
    return
  }
}

// CHECK-LABEL: gpu.func @xor_shuffle(
// CHECK: %[[V:.*]] = vector.load %arg0[%{{.*}}] {alignment = 2 : i64} : memref<64xi8>, vector<2xi8>
// CHECK: vector.extract %[[V]][1] : i8 from vector<2xi8>
// CHECK: %[[S:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i8
// CHECK: %[[W:.*]] = arith.extui %{{.*}} : i8 to i32
// CHECK: %{{.*}}, %{{.*}} = gpu.shuffle xor %[[W]], %{{.*}}, %{{.*}} : i32
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: vector.from_elements %{{.*}}, %{{.*}} : vector<2xi8>
// LOWER-LABEL: gpu.func @xor_shuffle(
// LOWER: %[[ONE:.*]] = arith.constant 1 : i32
// LOWER: gpu.shuffle xor %{{.*}}, %[[ONE]], %{{.*}} : i32

// -----

// Warp shuffle, idx mode: a lane permutation (lane bits rotate).
#a = #ttg.linear<{register = [], lane = [[1], [2], [4], [8], [16]], warp = [[32]], block = []}>
#b = #ttg.linear<{register = [], lane = [[2], [4], [8], [16], [1]], warp = [[32]], block = []}>
module attributes {"ttg.num-warps" = 2 : i32} {
  func.func @idx_shuffle(%in: memref<64xf32>, %out: memref<64xf32>) {
    %x = "ll.load"(%in) : (memref<64xf32>) -> tensor<64xf32, #a>
    %y = "ttg.convert_layout"(%x) : (tensor<64xf32, #a>) -> tensor<64xf32, #b>
    "ll.store"(%y, %out) : (tensor<64xf32, #b>, memref<64xf32>) -> ()
    return
  }
}

// CHECK-LABEL: gpu.func @idx_shuffle(
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>
// CHECK: memref.load %arg0
// CHECK: %{{.*}}, %{{.*}} = gpu.shuffle idx %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: memref.store

// -----

// Broadcast layouts: the source has a duplicate register (zero basis) and lanes that hold the
// same data; only distinct registers are loaded and stored.
#a = #ttg.linear<{register = [[0, 1], [0, 0], [1, 0]], lane = [[0, 2], [0, 4], [0, 0], [0, 8], [2, 0]], warp = [], block = []}>
#b = #ttg.linear<{register = [[1, 0], [0, 1]], lane = [[0, 2], [0, 4], [0, 0], [0, 8], [2, 0]], warp = [], block = []}>
module attributes {"ttg.num-warps" = 1 : i32} {
  func.func @broadcast(%in: memref<4x16xf32>, %out: memref<4x16xf32>) {
    %x = "ll.load"(%in) : (memref<4x16xf32>) -> tensor<4x16xf32, #a>
    %y = "ttg.convert_layout"(%x) : (tensor<4x16xf32, #a>) -> tensor<4x16xf32, #b>
    "ll.store"(%y, %out) : (tensor<4x16xf32, #b>, memref<4x16xf32>) -> ()
    return
  }
}

// CHECK-LABEL: gpu.func @broadcast(
// Two distinct register pairs are loaded, then expanded to the 8 registers (duplicates included).
// CHECK: vector.load %arg0{{.*}} vector<2xf32>
// CHECK: vector.load %arg0{{.*}} vector<2xf32>
// CHECK: %[[E:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 1, 0, 1, 2, 3, 2, 3] : vector<4xf32>, vector<4xf32>
// CHECK: vector.shuffle %[[E]], %[[E]] [0, 4, 1, 5] : vector<8xf32>, vector<8xf32>
// CHECK-NOT: gpu.shuffle
// CHECK-COUNT-4: memref.store
