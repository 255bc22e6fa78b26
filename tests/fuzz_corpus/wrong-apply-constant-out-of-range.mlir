// ARGS: ["-p", "builtin.module(ll-lower-apply)"]
// FOUND: 'lowered without a diagnostic'
#seed = #ll.layout<[["register", [[4, 0], [8, 0], [16, 0]]], ["lane", [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]], ["warp", [[1, 0], [2, 0]]]], [["dim0", 32], ["dim1", 32]]>
func.func @f() -> (i32, i32) {
  %reg = arith.constant 9 : i32
  %lane = arith.constant 3 : i32
  %warp = arith.constant 2 : i32
  %row, %col = "ll.apply"(%reg, %lane, %warp) {layout = #seed} : (i32, i32, i32) -> (i32, i32)
  return %row, %col : i32, i32
}
