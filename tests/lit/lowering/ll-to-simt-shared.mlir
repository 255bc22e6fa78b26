// ll-to-simt, shared-memory path: convert_layout through a swizzled scratch buffer planned by
// conversion.plan_conversion, and ttg.local_alloc/local_store/local_load with explicit shared
// encodings. The kernels here also compile to PTX (tests/test_lowering_ptx.py).
// RUN: linear-layout-opt --split-input-file --pass-pipeline='builtin.module(ll-lower)' %s | FileCheck %s
// PTX-PIPELINE: builtin.module(ll-lower)

// A 32x32 f32 transpose across 4 warps: 16-byte stores and 4-byte loads at swizzled (xor)
// addresses, one round, one barrier; 4 KiB of scratch, a view of the kernel's one workgroup
// attribution of bytes (f32 moves as i32 words).
#row = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#col = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  func.func @transpose(%in: memref<32x32xf32>, %out: memref<32x32xf32>) {
    %x = "ll.load"(%in) : (memref<32x32xf32>) -> tensor<32x32xf32, #row>
    %y = "ttg.convert_layout"(%x) : (tensor<32x32xf32, #row>) -> tensor<32x32xf32, #col>
    "ll.store"(%y, %out) : (tensor<32x32xf32, #col>, memref<32x32xf32>) -> ()
    return
  }
}

// CHECK-LABEL: gpu.func @transpose(
// CHECK-SAME: workgroup(%[[BYTES:.*]] : memref<4096xi8, #gpu.address_space<workgroup>> {llvm.align = 128 : i64})
// CHECK: %[[SMEM:[a-z_0-9]+]] = memref.view %[[BYTES]][%{{.*}}][] {ll.workgroup_buffer = 0 : i64} : memref<4096xi8, #gpu.address_space<workgroup>> to memref<1024xi32, #gpu.address_space<workgroup>>
// CHECK: gpu.thread_id x
// CHECK: arith.xori
// CHECK: vector.store %{{.*}}, %[[SMEM]][%{{.*}}] {alignment = 16 : i64} : memref<1024xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// CHECK: vector.store %{{.*}}, %[[SMEM]][%{{.*}}] {alignment = 16 : i64} : memref<1024xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-8: memref.load %[[SMEM]][%{{.*}}] : memref<1024xi32, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return

// -----

// Repetitions: the common register directions left after the vector become rounds of
// store / barrier / load with a barrier between rounds (2 rounds, 3 barriers), and the scratch
// is one round's worth (16 KiB instead of 32 KiB). The repetition loop is emitted unrolled: one
// group of stores, gpu.barrier, loads per round, every round at the same addresses
// (docs/passes.md gives the measured PTX of an scf.for version).
#a = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
#b = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 8], order = [0, 1]}>
module attributes {"ttg.num-warps" = 8 : i32} {
  func.func @reps(%in: memref<128x64xf32>, %out: memref<128x64xf32>) {
    %x = "ll.load"(%in) : (memref<128x64xf32>) -> tensor<128x64xf32, #a>
    %y = "ttg.convert_layout"(%x) : (tensor<128x64xf32, #a>) -> tensor<128x64xf32, #b>
    "ll.store"(%y, %out) : (tensor<128x64xf32, #b>, memref<128x64xf32>) -> ()
    return
  }
}

// CHECK-LABEL: gpu.func @reps(
// CHECK-SAME: workgroup(%[[BYTES:.*]] : memref<16384xi8, #gpu.address_space<workgroup>> {llvm.align = 128 : i64})
// CHECK: %[[SMEM:[a-z_0-9]+]] = memref.view %[[BYTES]][%{{.*}}][] {ll.workgroup_buffer = 0 : i64} : memref<16384xi8, #gpu.address_space<workgroup>> to memref<4096xi32, #gpu.address_space<workgroup>>
// round 0
// CHECK-COUNT-4: vector.store %{{.*}}, %[[SMEM]]{{.*}} vector<4xi32>
// CHECK-NOT: vector.store
// CHECK: gpu.barrier
// CHECK-COUNT-4: vector.load %[[SMEM]]{{.*}} vector<4xi32>
// CHECK-NOT: vector.load %[[SMEM]]
// CHECK: gpu.barrier
// round 1
// CHECK-COUNT-4: vector.store %{{.*}}, %[[SMEM]]{{.*}} vector<4xi32>
// CHECK: gpu.barrier
// CHECK-COUNT-4: vector.load %[[SMEM]]{{.*}} vector<4xi32>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return

// -----

// A broadcast source (a 16x16 tensor in a layout that covers 16x32): each element is written
// once, by the threads whose free lane bits are zero (scf.if); the 8-bit elements are packed
// into 8-byte stores, and the loads read 4-byte words (the packed path: each side first or last
// swaps a register with a lane, a gpu.shuffle xor of packed words). The one buffer's view of
// the workgroup bytes is the bytes themselves (i8 at offset 0): it folds away.
#a = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#b = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  func.func @broadcast(%in: memref<16x16xi8>, %out: memref<16x16xi8>) {
    %x = "ll.load"(%in) : (memref<16x16xi8>) -> tensor<16x16xi8, #a>
    %y = "ttg.convert_layout"(%x) : (tensor<16x16xi8, #a>) -> tensor<16x16xi8, #b>
    "ll.store"(%y, %out) : (tensor<16x16xi8, #b>, memref<16x16xi8>) -> ()
    return
  }
}

// CHECK-LABEL: gpu.func @broadcast(
// CHECK-SAME: workgroup(%[[SMEM:.*]] : memref<256xi8, #gpu.address_space<workgroup>> {llvm.align = 128 : i64})
// CHECK-NOT: memref.view
// CHECK: gpu.shuffle xor %{{.*}} : i32
// CHECK: %[[P:.*]] = arith.cmpi eq
// CHECK: scf.if %[[P]] {
// CHECK: vector.store %{{.*}}, %[[SMEM]][%{{.*}}] {alignment = 8 : i64} : memref<256xi8, #gpu.address_space<workgroup>>, vector<8xi8>
// CHECK: }
// CHECK: gpu.barrier
// CHECK: vector.load %[[SMEM]][%{{.*}}] {alignment = 4 : i64} : memref<256xi8, #gpu.address_space<workgroup>>, vector<4xi8>
// CHECK: gpu.shuffle xor %{{.*}} : i32
// CHECK: gpu.return

// -----

// ttg.local_alloc / local_load / local_store with an explicit swizzled encoding: one buffer
// (a view of the workgroup bytes) per allocation; barriers for RAW (after the store) and WAR (before the overwrite).
#row = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#col = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 4, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 4 : i32} {
  func.func @local(%in: memref<32x32xf16>, %out: memref<32x32xf16>) {
    %x = "ll.load"(%in) : (memref<32x32xf16>) -> tensor<32x32xf16, #row>
    %m = "ttg.local_alloc"(%x) : (tensor<32x32xf16, #row>) -> !ttg.memdesc<[32, 32], f16, #shared, #smem, "mutable">
    %y = "ttg.local_load"(%m) : (!ttg.memdesc<[32, 32], f16, #shared, #smem, "mutable">) -> tensor<32x32xf16, #col>
    "ttg.local_store"(%y, %m) : (tensor<32x32xf16, #col>, !ttg.memdesc<[32, 32], f16, #shared, #smem, "mutable">) -> ()
    "ll.store"(%y, %out) : (tensor<32x32xf16, #col>, memref<32x32xf16>) -> ()
    return
  }
}

// CHECK-LABEL: gpu.func @local(
// CHECK-SAME: workgroup(%[[BYTES:.*]] : memref<2048xi8, #gpu.address_space<workgroup>> {llvm.align = 128 : i64})
// CHECK: %[[BUF:[a-z_0-9]+]] = memref.view %[[BYTES]][%{{.*}}][] {ll.workgroup_buffer = 0 : i64} : memref<2048xi8, #gpu.address_space<workgroup>> to memref<1024xf16, #gpu.address_space<workgroup>>
// CHECK: vector.store %{{.*}}, %[[BUF]][%{{.*}}] {alignment = 16 : i64} : memref<1024xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: gpu.barrier
// CHECK: memref.load %[[BUF]]
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[BUF]]
// CHECK: gpu.return

// -----

// The repetition loop as Triton sizes it: blocked -> mma 64x64 f16 on 4 warps. Three directions
// are registers on both sides; Triton's ldmatrix tile keeps one in the vector and makes the
// other two rounds (2 KiB of scratch), so the plan does too: 4 rounds of one 16-byte store,
// a barrier and four 4-byte loads, all rounds at the same (swizzled) addresses, with a barrier
// between rounds (7 barriers).
#blk = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  func.func @rounds(%in: memref<64x64xf16>, %out: memref<64x64xf16>) {
    %x = "ll.load"(%in) : (memref<64x64xf16>) -> tensor<64x64xf16, #blk>
    %y = "ttg.convert_layout"(%x) : (tensor<64x64xf16, #blk>) -> tensor<64x64xf16, #mma>
    "ll.store"(%y, %out) : (tensor<64x64xf16, #mma>, memref<64x64xf16>) -> ()
    return
  }
}

// CHECK-LABEL: gpu.func @rounds(
// CHECK-SAME: workgroup(%[[BYTES:.*]] : memref<2048xi8, #gpu.address_space<workgroup>> {llvm.align = 128 : i64})
// CHECK: %[[SMEM:[a-z_0-9]+]] = memref.view %[[BYTES]][%{{.*}}][] {ll.workgroup_buffer = 0 : i64} : memref<2048xi8, #gpu.address_space<workgroup>> to memref<1024xf16, #gpu.address_space<workgroup>>
// round 0
// CHECK: vector.store %{{.*}}, %[[SMEM]][%[[ST:.*]]] {alignment = 16 : i64} : {{.*}}, vector<8xf16>
// CHECK-NEXT: gpu.barrier
// CHECK: vector.load %[[SMEM]][%[[L0:.*]]] {alignment = 4 : i64} : {{.*}}, vector<2xf16>
// CHECK: vector.load %[[SMEM]][%[[L1:.*]]] {alignment = 4 : i64} : {{.*}}, vector<2xf16>
// CHECK: vector.load %[[SMEM]][%[[L2:.*]]] {alignment = 4 : i64} : {{.*}}, vector<2xf16>
// CHECK: vector.load %[[SMEM]][%[[L3:.*]]] {alignment = 4 : i64} : {{.*}}, vector<2xf16>
// rounds 1, 2, 3: a barrier (the previous loads are done), then the same addresses; each
// round's f16 pairs are picked as packed i32 units
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: vector.shuffle {{.*}} : vector<16xi32>, vector<16xi32>
// CHECK-NEXT: vector.bitcast {{.*}} : vector<4xi32> to vector<8xf16>
// CHECK-NEXT: vector.store %{{.*}}, %[[SMEM]][%[[ST]]] {alignment = 16 : i64} : {{.*}}, vector<8xf16>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: vector.load %[[SMEM]][%[[L0]]]
// CHECK-NEXT: vector.load %[[SMEM]][%[[L1]]]
// CHECK-NEXT: vector.load %[[SMEM]][%[[L2]]]
// CHECK-NEXT: vector.load %[[SMEM]][%[[L3]]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: vector.shuffle {{.*}} : vector<16xi32>, vector<16xi32>
// CHECK-NEXT: vector.bitcast {{.*}} : vector<4xi32> to vector<8xf16>
// CHECK-NEXT: vector.store %{{.*}}, %[[SMEM]][%[[ST]]] {alignment = 16 : i64} : {{.*}}, vector<8xf16>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: vector.load %[[SMEM]][%[[L0]]]
// CHECK-NEXT: vector.load %[[SMEM]][%[[L1]]]
// CHECK-NEXT: vector.load %[[SMEM]][%[[L2]]]
// CHECK-NEXT: vector.load %[[SMEM]][%[[L3]]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: vector.shuffle {{.*}} : vector<16xi32>, vector<16xi32>
// CHECK-NEXT: vector.bitcast {{.*}} : vector<4xi32> to vector<8xf16>
// CHECK-NEXT: vector.store %{{.*}}, %[[SMEM]][%[[ST]]] {alignment = 16 : i64} : {{.*}}, vector<8xf16>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: vector.load %[[SMEM]][%[[L0]]]
// CHECK-NEXT: vector.load %[[SMEM]][%[[L1]]]
// CHECK-NEXT: vector.load %[[SMEM]][%[[L2]]]
// CHECK-NEXT: vector.load %[[SMEM]][%[[L3]]]
// CHECK-NOT: gpu.barrier
// CHECK-NOT: %[[SMEM]]
// CHECK: gpu.return

