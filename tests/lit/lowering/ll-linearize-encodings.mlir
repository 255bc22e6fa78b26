// ll-linearize-encodings: every encoding becomes #ttg.linear / #ttg.shared_linear with the same meaning.
// RUN: linear-layout-opt --pass-pipeline='builtin.module(ll-linearize-encodings)' %s | FileCheck %s
// Idempotent, and the output still verifies:
// RUN: linear-layout-opt --pass-pipeline='builtin.module(ll-linearize-encodings)' %s | linear-layout-opt --pass-pipeline='builtin.module(ll-linearize-encodings)' | FileCheck %s

#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>

// The blocked layout of a 64x64 tensor: 4 registers along dim1, then 2 more tiles along dim0.
// CHECK-DAG: #[[LIN:.*]] = #ttg.linear<{block = [], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [1, 0], [2, 0]], register = {{\[\[}}0, 1], [0, 2], [0, 32], [16, 0], [32, 0]], warp = {{\[\[}}4, 0], [8, 0]]}>
// The slice drops dim1: lanes along dim1 broadcast (zero bases).
// CHECK-DAG: #[[SLICE:.*]] = #ttg.linear<{block = [], lane = {{\[\[}}0], [0], [0], [1], [2]], register = {{\[\[}}16], [32]], warp = {{\[\[}}4], [8]]}>
// CHECK-DAG: #[[SH:.*]] = #ttg.shared_linear<{alignment = 16 : i64, offset = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 4], [2, 8], [4, 16], [8, 0], [16, 0], [32, 0]]}>
// CHECK-DAG: #[[MMA:.*]] = #ttg.linear<{block = [], lane = {{.*}}, register = {{.*}}, warp = {{.*}}}>
// CHECK-NOT: #ttg.blocked
// CHECK-NOT: #ttg.slice
// CHECK-NOT: #ttg.swizzled_shared
// CHECK-NOT: #ttg.nvidia_mma
// CHECK-LABEL: func.func @f(
// CHECK-SAME: %{{.*}}: tensor<64x64xf16, #[[LIN]]>) -> tensor<64xf16, #[[SLICE]]>
// CHECK: "ttg.local_alloc"(%{{.*}}) : (tensor<64x64xf16, #[[LIN]]>) -> !ttg.memdesc<[64, 64], f16, #[[SH]], #smem, "immutable">
// Dense constants carry their tensor type, which is rewritten too.
// CHECK: arith.constant dense<1.000000e+00> : tensor<64xf16, #[[SLICE]]>
// CHECK: arith.constant dense<0.000000e+00> : tensor<32x32xf32, #[[MMA]]>
module attributes {"ttg.num-warps" = 4 : i32} {
  func.func @f(%x: tensor<64x64xf16, #blocked>) -> tensor<64xf16, #ttg.slice<{dim = 1, parent = #blocked}>> {
    %a = "ttg.local_alloc"(%x) : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<[64, 64], f16, #shared, #smem, "immutable">
    %c = arith.constant dense<1.0> : tensor<64xf16, #ttg.slice<{dim = 1, parent = #blocked}>>
    %m = arith.constant dense<0.0> : tensor<32x32xf32, #mma>
    %s = arith.addf %c, %c : tensor<64xf16, #ttg.slice<{dim = 1, parent = #blocked}>>
    return %s : tensor<64xf16, #ttg.slice<{dim = 1, parent = #blocked}>>
  }
}
