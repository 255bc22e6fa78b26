// Each chunk is its own module; outputs are joined by the same marker, and each chunk has its
// own aliases.
// RUN: linear-layout-opt %s --split-input-file | FileCheck %s
// RUN: linear-layout-opt %s --split-input-file | linear-layout-opt --split-input-file | FileCheck %s

// CHECK: #blocked = #ttg.blocked<{order = [0], sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1]}>
// CHECK: func.func @first(%arg0: tensor<32xf32, #blocked>)
func.func @first(%a: tensor<32xf32, #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>>) {
  return
}

// -----
// CHECK: // -----
// CHECK-NEXT: #blocked = #ttg.blocked<{order = [0], sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1]}>
// CHECK: func.func @second(%arg0: tensor<64xf32, #blocked>)
func.func @second(%a: tensor<64xf32, #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>>) {
  return
}
