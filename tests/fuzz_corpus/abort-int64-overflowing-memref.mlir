// ARGS: ["-p", "builtin.module(ll-lower)"]
// FOUND: 'SIGABRT in strided layout'
func.func @f(%a: memref<2147483648x1099511627776xf16>) {
  return
}
