// ARGS: ["-p", "builtin.module(ll-linearize-encodings)"]
// FOUND: 'offset bases must not be empty'
#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 1 : i32} {
  func.func @f(%x: tensor<1xf16, #blocked>) {
    %a = "ttg.local_alloc"(%x) : (tensor<1xf16, #blocked>) -> !ttg.memdesc<[1], f16, #shared, #smem, "immutable">
    return
  }
}
