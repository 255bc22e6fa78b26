// Every ttg encoding round-trips: parse, print with aliases, parse the output again.
// RUN: linear-layout-opt %s | FileCheck %s
// RUN: linear-layout-opt %s | linear-layout-opt | FileCheck %s

// MLIR sorts dictionary keys; Triton's parser accepts any order.
// CHECK-DAG: #[[BLOCKED:blocked[0-9]*]] = #ttg.blocked<{order = [1, 0], sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1]}>
// CHECK-DAG: #[[LINEAR:linear[0-9]*]] = #ttg.linear<{block = [], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [1, 0], [2, 0]], register = {{\[\[}}0, 1], [0, 2]], warp = {{\[\[}}4, 0], [8, 0]]}>
// CHECK-DAG: #[[MMA2:mma[0-9]*]] = #ttg.nvidia_mma<{instrShape = [16, 8], versionMajor = 2 : i64, versionMinor = 0 : i64, warpsPerCTA = [2, 2]}>
// CHECK-DAG: #[[MMA3:mma[0-9]*]] = #ttg.nvidia_mma<{instrShape = [16, 64, 16], versionMajor = 3 : i64, versionMinor = 0 : i64, warpsPerCTA = [4, 1]}>
// CHECK-DAG: #[[MFMA:mma[0-9]*]] = #ttg.amd_mfma<{instrShape = [32, 32, 8], isTransposed = true, version = 3 : i64, warpsPerCTA = [2, 2]}>
// CHECK-DAG: #[[SWIZZLED:shared[0-9]*]] = #ttg.swizzled_shared<{maxPhase = 8 : i64, order = [1, 0], perPhase = 1 : i64, vec = 8 : i64}>
// CHECK-DAG: #[[NVMMA:shared[0-9]*]] = #ttg.nvmma_shared<{elementBitWidth = 16 : i64, swizzlingByteWidth = 128 : i64, transposed = false}>
// CHECK-DAG: #[[SLINEAR:shared[0-9]*]] = #ttg.shared_linear<{alignment = 16 : i64, offset = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [32, 0]]}>
// CHECK-DAG: #smem = #ttg.shared_memory

#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  // CHECK-LABEL: func.func @distributed
  // CHECK-SAME: tensor<64x64xf32, #[[BLOCKED]]>
  // CHECK-SAME: tensor<64xf32, #ttg.slice<{dim = 1 : i64, parent = #[[BLOCKED]]}>>
  // CHECK-SAME: tensor<16x32xf32, #[[LINEAR]]>
  // CHECK-SAME: tensor<64x64xf32, #[[MMA2]]>
  // CHECK-SAME: tensor<64x64xf16, #ttg.dot_op<{kWidth = 2 : i64, opIdx = 0 : i64, parent = #[[MMA2]]}>>
  // CHECK-SAME: tensor<64x64xf32, #[[MMA3]]>
  func.func @distributed(
      %a: tensor<64x64xf32, #blocked>,
      %b: tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>>,
      %c: tensor<16x32xf32, #ttg.linear<{register = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]], warp = [[4, 0], [8, 0]], block = []}>>,
      %d: tensor<64x64xf32, #mma>,
      %e: tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>,
      %f: tensor<64x64xf32, #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>>) {
    return
  }

  // AMD wavefronts have 64 lanes; launch facts on a function override the module's.
  // CHECK-LABEL: func.func @amd
  // CHECK-SAME: tensor<64x64xf32, #[[MFMA]]>
  func.func @amd(%g: tensor<64x64xf32, #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>>)
      attributes {"ttg.threads-per-warp" = 64 : i32} {
    return
  }

  // CHECK-LABEL: func.func @shared
  // CHECK-SAME: !ttg.memdesc<[64, 64], f16, #[[SWIZZLED]], #smem, "mutable">
  // CHECK-SAME: !ttg.memdesc<[64, 64], f16, #[[NVMMA]], #smem, "immutable">
  // CHECK-SAME: !ttg.memdesc<[64, 64], f16, #[[SLINEAR]], #smem, "mutable">
  func.func @shared(
      %a: !ttg.memdesc<[64, 64], f16, #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>, #smem, "mutable">,
      %b: !ttg.memdesc<[64, 64], f16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>, #smem, "immutable">,
      %c: !ttg.memdesc<[64, 64], f16, #ttg.shared_linear<{offset = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [32, 0]], alignment = 16}>, #smem, "mutable">) {
    return
  }
}
