// ARGS: ["-p", "builtin.module(ll-verify, ll-explain-conversions)"]
// FOUND: 'nanobind: GIL not held (parallel verifier diagnostics)'
module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {module {
// VERSION: linear-layout-opt {{[0-9]+\.[0-9]+}}
func.func @f() {
  return
}
// CHECK: func.func @f()
func.func @f() {
  return
}
}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}
#a = #ttg.linear<{register = [[0, 1], [0, 0], [1, 0]], lane = [[0, 2], [0, 4], [0, 0], [0, 8], [2, 0]], warp = [], block = []}>
module attributes {"ttg.num-warps" = 1 : i32} {
  func.func @broadcast(%in: memref<4x16xf32>, %out: memref<4x16xf32>) {
  }
}
