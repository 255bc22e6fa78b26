func.func @f() {
  %0 = arith.constant 1 : tensor<4xf32, #ttg.blocked<{sizePerThread = [1>>
  return
}
