// A conversion ll-to-simt cannot plan is diagnosed at the op, and the module stays unchanged.
// RUN: linear-layout-opt --verify-diagnostics -p 'builtin.module(ll-explain-conversions)' %s

// The two layouts spread dim0 and dim1 over the two CTAs differently: data would cross CTAs.
#a = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0], CGALayout = [[1, 0]]}>
#b = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0], CGALayout = [[0, 1]]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.num-ctas" = 2 : i32} {
  func.func @across_ctas(%x: tensor<64x64xf16, #a>) -> tensor<64x64xf16, #b> {
    // expected-error@+1 {{moves data between CTAs}}
    %y = "ttg.convert_layout"(%x) : (tensor<64x64xf16, #a>) -> tensor<64x64xf16, #b>
    return %y : tensor<64x64xf16, #b>
  }
}
