// ARGS: ["-p", "builtin.module(ll-lower)", "--emit-ptx", "--ptx-chip=sm_21"]
// FOUND: 'no shfl.sync on sm_21'
// A 32x32 f32 tile is loaded in a row-major blocked layout (each thread holds pairs of
// neighbours along a row), converted to the transposed column-major layout (pairs along a
// column) and stored back. Each warp keeps its rows, so the conversion is a warp-shuffle
// exchange: one register bit trades places with one lane bit. Lower it to per-thread SIMT code with
//
//   linear-layout-opt --pass-pipeline='builtin.module(ll-lower)' examples/transpose.mlir
//
// and compile that to PTX with the stock mlir-opt:
//
//   ... | mlir-opt --pass-pipeline='builtin.module(gpu-lower-to-nvvm-pipeline{cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa})'
#row_major = #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#col_major = #ttg.blocked<{sizePerThread = [2, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [0, 1]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @transpose(%in: memref<32x32xf32>, %out: memref<32x32xf32>) {
    %tile = "ll.load"(%in) : (memref<32x32xf32>) -> tensor<32x32xf32, #row_major>
    %t = "ttg.convert_layout"(%tile) : (tensor<32x32xf32, #row_major>) -> tensor<32x32xf32, #col_major>
    "ll.store"(%t, %out) : (tensor<32x32xf32, #col_major>, memref<32x32xf32>) -> ()
    return
  }
}
