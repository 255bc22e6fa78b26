// Pipelines mix Python passes (ll-verify) with upstream ones, take {option=value} and nest
// under func.func anchors.
// RUN: linear-layout-opt %s -p 'builtin.module(ll-verify{check-launch=false max-errors=1}, canonicalize{max-iterations=2}, func.func(ll-verify, cse))' | FileCheck %s
// RUN: linear-layout-opt %s --pass-pipeline='builtin.module(func.func(cse, ll-verify), cse)' | FileCheck %s
// RUN: linear-layout-opt %s -p 'cse' | FileCheck %s
// RUN: linear-layout-opt %s | FileCheck %s --check-prefix=NOPASS

#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  // CHECK-LABEL: func.func @twice
  // NOPASS-LABEL: func.func @twice
  func.func @twice(%x: i32) -> (i32, i32) {
    // CHECK: %[[SUM:.*]] = arith.addi %arg0, %arg0
    // CHECK-NOT: arith.addi
    // CHECK: return %[[SUM]], %[[SUM]]
    // NOPASS-COUNT-2: arith.addi
    %a = arith.addi %x, %x : i32
    %b = arith.addi %x, %x : i32
    return %a, %b : i32, i32
  }
  // CHECK: func.func @layout(%arg0: tensor<128xf32, #blocked>)
  func.func @layout(%t: tensor<128xf32, #blocked>) {
    return
  }
}
