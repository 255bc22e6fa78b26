// ARGS: ["-p", "builtin.module(ll-lower)"]
// FOUND: '32768 registers per thread, unrolled: hang'
#a = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>
#b = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 1], order = [0, 1]}>
module attributes {"ttg.num-warps" = 1 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @k(%in: memref<16384x64xf16>, %out: memref<16384x64xf16>) {
    %tile = "ll.load"(%in) : (memref<16384x64xf16>) -> tensor<16384x64xf16, #a>
    %t = "ttg.convert_layout"(%tile) : (tensor<16384x64xf16, #a>) -> tensor<16384x64xf16, #b>
    "ll.store"(%t, %out) : (tensor<16384x64xf16, #b>, memref<16384x64xf16>) -> ()
    return
  }
}
