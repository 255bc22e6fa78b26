// ll-lower-apply: ll.apply becomes Triton-style applyLinearLayout index math.
// RUN: linear-layout-opt --split-input-file --pass-pipeline='builtin.module(ll-lower-apply)' %s | FileCheck %s

// The seed's 32x32 blocked layout (sizePerThread [1, 1], threadsPerWarp [1, 32],
// warpsPerCTA [4, 1], order [1, 0]): (register=5, lane=3, warp=2) holds element (22, 3).
// With all inputs constant, the whole application folds to constants.
#seed = #ll.layout<[["register", [[4, 0], [8, 0], [16, 0]]], ["lane", [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]], ["warp", [[1, 0], [2, 0]]]], [["dim0", 32], ["dim1", 32]]>

// CHECK-LABEL: func.func @seed_constant
// CHECK-NOT: ll.apply
// CHECK: %[[R:.*]] = arith.constant 22 : i32
// CHECK: %[[C:.*]] = arith.constant 3 : i32
// CHECK-NOT: arith.xori
// CHECK: return %[[R]], %[[C]] : i32, i32
func.func @seed_constant() -> (i32, i32) {
  %reg = arith.constant 5 : i32
  %lane = arith.constant 3 : i32
  %warp = arith.constant 2 : i32
  %row, %col = "ll.apply"(%reg, %lane, %warp) {layout = #seed} : (i32, i32, i32) -> (i32, i32)
  return %row, %col : i32, i32
}

// -----

// Symbolic inputs: x = reg | lane << 3 | warp << 8. The row is (x & 7) << 2 (registers, one
// diagonal) OR (x & 0x300) >> 8 (warps, another diagonal): disjoint bits, so `ori`. The column
// is one diagonal, (x & 0xF8) >> 3, with nothing to combine.
#seed = #ll.layout<[["register", [[4, 0], [8, 0], [16, 0]]], ["lane", [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]], ["warp", [[1, 0], [2, 0]]]], [["dim0", 32], ["dim1", 32]]>

// CHECK-LABEL: func.func @seed_symbolic(
// CHECK-SAME: %[[REG:[a-z0-9]+]]: i32, %[[LANE:[a-z0-9]+]]: i32, %[[WARP:[a-z0-9]+]]: i32)
// CHECK-NOT: ll.apply
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : i32
// CHECK: %[[L:.*]] = arith.shli %[[LANE]], %[[C3]]
// CHECK: %[[X0:.*]] = arith.ori %[[REG]], %[[L]]
// CHECK: %[[C8:.*]] = arith.constant 8 : i32
// CHECK: %[[W:.*]] = arith.shli %[[WARP]], %[[C8]]
// CHECK: %[[X:.*]] = arith.ori %[[X0]], %[[W]]
// CHECK: arith.andi %[[X]], %{{.*}}
// CHECK: arith.shrui
// CHECK: arith.andi %[[X]], %{{.*}}
// CHECK: arith.shli
// CHECK: %[[ROW:.*]] = arith.ori
// CHECK: %[[M:.*]] = arith.andi %[[X]], %{{.*}}
// CHECK: %[[COL:.*]] = arith.shrui %[[M]], %[[C3]]
// CHECK-NOT: arith.xori
// CHECK: return %[[ROW]], %[[COL]] : i32, i32
func.func @seed_symbolic(%reg: i32, %lane: i32, %warp: i32) -> (i32, i32) {
  %row, %col = "ll.apply"(%reg, %lane, %warp) {layout = #seed} : (i32, i32, i32) -> (i32, i32)
  return %row, %col : i32, i32
}

// -----

// Overlapping terms combine with `xori`; a constant register folds into the result with one
// final `xori` of the constant part.
#swizzle = #ll.layout<[["register", [[0, 1], [0, 2]]], ["lane", [[1, 1], [2, 2]]]], [["dim0", 4], ["dim1", 4]]>

// CHECK-LABEL: func.func @xor_swizzle(
// CHECK-SAME: %[[LANE:[a-z0-9]+]]: i32)
// CHECK: %[[C3:.*]] = arith.constant 3 : i32
// CHECK: %[[ROW:.*]] = arith.andi %[[LANE]], %[[C3]]
// CHECK: %[[COL0:.*]] = arith.andi %[[LANE]], %[[C3]]
// CHECK: %[[C2:.*]] = arith.constant 2 : i32
// CHECK: %[[COL:.*]] = arith.xori %[[COL0]], %[[C2]]
// CHECK: return %[[ROW]], %[[COL]]
func.func @xor_swizzle(%lane: i32) -> (i32, i32) {
  %reg = arith.constant 2 : i32
  %row, %col = "ll.apply"(%reg, %lane) {layout = #swizzle} : (i32, i32) -> (i32, i32)
  return %row, %col : i32, i32
}

// -----

// `index` operands are computed in i32 and cast back; a broadcast input (all bases zero) is
// never even packed.
#bcast = #ll.layout<[["lane", [[1], [2]]], ["warp", [[0], [0]]]], [["dim0", 4]]>

// CHECK-LABEL: func.func @index_and_broadcast(
// CHECK-SAME: %[[LANE:[a-z0-9]+]]: index, %[[WARP:[a-z0-9]+]]: index)
// CHECK: %[[L:.*]] = arith.index_castui %[[LANE]] : index to i32
// CHECK-NOT: arith.shli
// CHECK: %[[R:.*]] = arith.andi %[[L]], %{{.*}} : i32
// CHECK: %[[I:.*]] = arith.index_castui %[[R]] : i32 to index
// CHECK: return %[[I]]
func.func @index_and_broadcast(%lane: index, %warp: index) -> index {
  %x = "ll.apply"(%lane, %warp) {layout = #bcast} : (index, index) -> index
  return %x : index
}
