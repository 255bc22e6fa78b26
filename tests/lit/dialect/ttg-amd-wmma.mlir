// #ttg.amd_wmma in Triton 3.9's syntax round-trips through the driver, and ll-verify accepts
// it against the tensor shape and the launch (4 warps: two warp bases).
// RUN: linear-layout-opt %s | FileCheck %s
// RUN: linear-layout-opt %s | linear-layout-opt | FileCheck %s

// CHECK: #ttg.amd_wmma<{ctaLayout = {warp = {{\[\[}}0, 1], [1, 0]]}, isTranspose = true, version = 2 : i64}>
module attributes {"ttg.num-warps" = 4 : i32} {
  func.func @wmma(%a: tensor<64x64xf32, #ttg.amd_wmma<{version = 2, isTranspose = true, ctaLayout = {warp = [[0, 1], [1, 0]]}}>>) {
    return
  }
}
