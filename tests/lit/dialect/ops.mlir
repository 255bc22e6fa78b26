// The ttg and ll operations, in generic form (IRDL has no custom assembly).
// RUN: linear-layout-opt %s | FileCheck %s
// RUN: linear-layout-opt %s | linear-layout-opt | FileCheck %s
// RUN: linear-layout-opt --mlir-print-op-generic %s | linear-layout-opt | FileCheck %s

#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>
#shared = #ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
#lanes = #ll.layout<[["register", [[0, 1], [0, 2]]], ["lane", [[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]]], ["warp", [[4, 0], [8, 0]]]], [["dim0", 16], ["dim1", 32]]>

// CHECK-LABEL: func.func @ttg_ops
module attributes {"ttg.num-warps" = 4 : i32} {
  func.func @ttg_ops(%x: tensor<64x64xf16, #blocked>) -> tensor<64x64xf16, #blocked1> {
    // CHECK: %[[C:.*]] = "ttg.convert_layout"(%arg0) : (tensor<64x64xf16, #blocked>) -> tensor<64x64xf16, #blocked1>
    %c = "ttg.convert_layout"(%x) : (tensor<64x64xf16, #blocked>) -> tensor<64x64xf16, #blocked1>
    // CHECK: %[[A:.*]] = "ttg.local_alloc"(%arg0) : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<[64, 64], f16, #shared, #smem, "immutable">
    %a = "ttg.local_alloc"(%x) : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<[64, 64], f16, #shared, #smem, "immutable">
    // CHECK: %[[B:.*]] = "ttg.local_alloc"() : () -> !ttg.memdesc<[64, 64], f16, #shared, #smem, "mutable">
    %b = "ttg.local_alloc"() : () -> !ttg.memdesc<[64, 64], f16, #shared, #smem, "mutable">
    // CHECK: "ttg.local_store"(%[[C]], %[[B]])
    "ttg.local_store"(%c, %b) : (tensor<64x64xf16, #blocked1>, !ttg.memdesc<[64, 64], f16, #shared, #smem, "mutable">) -> ()
    // CHECK: "ttg.local_load"(%[[A]]) : (!ttg.memdesc<[64, 64], f16, #shared, #smem, "immutable">) -> tensor<64x64xf16, #blocked1>
    %l = "ttg.local_load"(%a) : (!ttg.memdesc<[64, 64], f16, #shared, #smem, "immutable">) -> tensor<64x64xf16, #blocked1>
    return %l : tensor<64x64xf16, #blocked1>
  }

  // CHECK-LABEL: func.func @ll_ops
  func.func @ll_ops(%m: memref<64x64xf32>, %i: index, %reg: i32, %lane: i32, %warp: i32) {
    // CHECK: %{{.*}}:2 = "ll.apply"(%arg2, %arg3, %arg4) {layout = #layout} : (i32, i32, i32) -> (i32, i32)
    %row, %col = "ll.apply"(%reg, %lane, %warp) {layout = #lanes} : (i32, i32, i32) -> (i32, i32)
    // CHECK: %[[T:.*]] = "ll.load"(%arg0, %arg1, %arg1) : (memref<64x64xf32>, index, index) -> tensor<16x32xf32, #layout>
    %t = "ll.load"(%m, %i, %i) : (memref<64x64xf32>, index, index) -> tensor<16x32xf32, #lanes>
    // CHECK: "ll.store"(%[[T]], %arg0) : (tensor<16x32xf32, #layout>, memref<64x64xf32>) -> ()
    "ll.store"(%t, %m) : (tensor<16x32xf32, #lanes>, memref<64x64xf32>) -> ()
    return
  }
}
