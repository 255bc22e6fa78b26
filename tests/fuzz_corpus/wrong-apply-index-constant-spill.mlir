// ARGS: ["-p", "builtin.module(ll-lower-apply)"]
// FOUND: 'index operands spill'
#seed = #ll.layout<[["register", [[4, 0], [8, 0], [16, 0]]], ["lane", [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]], ["warp", [[1, 0], [2, 0]]]], [["dim0", 32], ["dim1", 32]]>
func.func @f(%lane: index, %warp: index) -> (index, index) {
  %reg = arith.constant 9 : index
  %row, %col = "ll.apply"(%reg, %lane, %warp) {layout = #seed} : (index, index, index) -> (index, index)
  return %row, %col : index, index
}
