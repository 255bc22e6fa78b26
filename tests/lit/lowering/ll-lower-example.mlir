// The README's example: ll-lower turns examples/transpose.mlir into SIMT code with warp shuffles.
// RUN: linear-layout-opt --pass-pipeline='builtin.module(ll-lower)' %S/../../../examples/transpose.mlir | FileCheck %s
// PTX-FILE: ../../../examples/transpose.mlir

// CHECK: module attributes {gpu.container_module
// CHECK: gpu.module @kernels
// CHECK: gpu.func @transpose(%arg0: memref<32x32xf32>, %arg1: memref<32x32xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK: gpu.thread_id x
// CHECK-COUNT-4: vector.load %arg0{{.*}} {alignment = 8 : i64} : memref<32x32xf32>, vector<2xf32>
// CHECK-COUNT-8: gpu.shuffle idx
// CHECK-COUNT-8: memref.store
// CHECK: gpu.return
// CHECK-NOT: ll.
// CHECK-NOT: ttg.convert_layout
