// ARGS: ["-p", "builtin.module(ll-lower-apply)"]
// FOUND: 'trunci to i32 always 0'
#big = #ll.layout<[["register", [[4294967296]]]], [["dim0", 8589934592]]>
func.func @f(%r: i32) -> (i32) {
  %row = "ll.apply"(%r) {layout = #big} : (i32) -> (i32)
  return %row : i32
}
