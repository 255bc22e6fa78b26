// ll-explain-conversions annotates each ttg.convert_layout with the strategy ll-to-simt will use
// and its predicted cost, and changes nothing else.
// RUN: linear-layout-opt --split-input-file -p 'builtin.module(ll-explain-conversions)' %s | FileCheck %s
// RUN: linear-layout-opt --split-input-file -p 'builtin.module(ll-explain-conversions, ll-lower)' %s | FileCheck %s --check-prefix=LOWER

#a = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#b = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  func.func @strategies(%in: memref<64x64xf16>, %out: memref<64x64xf16>) {
    %x = "ll.load"(%in) : (memref<64x64xf16>) -> tensor<64x64xf16, #a>
    // The same layout: nothing to do.
    %n = "ttg.convert_layout"(%x) : (tensor<64x64xf16, #a>) -> tensor<64x64xf16, #a>
    // A transpose across warps goes through shared memory: 64x64 f16 is 8192 bytes, stored with
    // 8-byte and read with 16-byte accesses, each at the minimum number of wavefronts.
    %t = "ttg.convert_layout"(%n) : (tensor<64x64xf16, #a>) -> tensor<64x64xf16, #b>
    "ll.store"(%t, %out) : (tensor<64x64xf16, #b>, memref<64x64xf16>) -> ()
    return
  }
}

// CHECK-LABEL: func.func @strategies
// CHECK: "ttg.convert_layout"(%{{.*}}) {ll.explain = "noop (the layouts agree)"}
// CHECK: "ttg.convert_layout"(%{{.*}}) {ll.explain = "shared: 8192 B scratch, 1 rep(s), 1 barrier(s); store 8 x 8 B (64 wavefronts, ideal 64); load 4 x 16 B (64 wavefronts, ideal 64); {{[0-9]+}} index ops; floor 128: reached; rejected: shuffle (data moves between warps); packed (no sub-word access keeps the exchange above the floor)"}
// LOWER-LABEL: gpu.func @strategies
// LOWER: gpu.barrier

// -----

// One register bit trades places with one lane bit: a warp-shuffle exchange.
#row = #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#col = #ttg.blocked<{sizePerThread = [2, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [0, 1]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  func.func @shuffle(%in: memref<32x32xf32>, %out: memref<32x32xf32>) {
    %x = "ll.load"(%in) : (memref<32x32xf32>) -> tensor<32x32xf32, #row>
    %t = "ttg.convert_layout"(%x) : (tensor<32x32xf32, #row>) -> tensor<32x32xf32, #col>
    "ll.store"(%t, %out) : (tensor<32x32xf32, #col>, memref<32x32xf32>) -> ()
    return
  }
}

// CHECK-LABEL: func.func @shuffle
// CHECK: {ll.explain = "shuffle: 8 shuffles, 16 selects per thread"}
// LOWER-LABEL: gpu.func @shuffle
// LOWER-COUNT-8: gpu.shuffle idx
