// #ll.layout round-trips exactly, including the order of input and output dimensions, which
// is not alphabetical here on purpose.
// RUN: linear-layout-opt %s | FileCheck %s
// RUN: linear-layout-opt %s | linear-layout-opt | FileCheck %s

// CHECK: #[[L:layout[0-9]*]] = #ll.layout<{{\[\[}}"warp", {{\[\[}}0, 2]]], ["register", {{\[\[}}0, 1], [1, 0]]], ["lane", {{\[\[}}2, 0], [4, 0], [0, 0]]]], {{\[\[}}"dim1", 8], ["dim0", 4]]>
// CHECK: #[[NAMES:layout[0-9]*]] = #ll.layout<{{\[\[}}"offset", {{\[\[}}1], [2]]], ["zeta", []]], {{\[\[}}"row", 4]]>
// CHECK: #[[QUOTED:layout[0-9]*]] = #ll.layout<{{\[\[}}"in\22dim\\", {{\[\[}}1]]]], {{\[\[}}"out dim", 2]]>

module attributes {"ttg.num-warps" = 2 : i32, "ttg.threads-per-warp" = 8 : i32} {
  // CHECK-LABEL: func.func @layouts
  // CHECK-SAME: tensor<8x4xf32, #[[L]]>
  func.func @layouts(%a: tensor<8x4xf32, #ll.layout<[["warp", [[0, 2]]], ["register", [[0, 1], [1, 0]]], ["lane", [[2, 0], [4, 0], [0, 0]]]], [["dim1", 8], ["dim0", 4]]>>) {
    // CHECK: "ll.apply"(%{{.*}}, %{{.*}}) {layout = #[[NAMES]]} : (i32, i32) -> i32
    %c0 = arith.constant 0 : i32
    %0 = "ll.apply"(%c0, %c0) {layout = #ll.layout<[["offset", [[1], [2]]], ["zeta", []]], [["row", 4]]>} : (i32, i32) -> i32
    // CHECK: "ll.apply"(%{{.*}}) {layout = #[[QUOTED]]} : (i32) -> i32
    %1 = "ll.apply"(%c0) {layout = #ll.layout<[["in\"dim\\", [[1]]]], [["out dim", 2]]>} : (i32) -> i32
    return
  }
}
