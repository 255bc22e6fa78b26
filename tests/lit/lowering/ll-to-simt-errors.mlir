// ll-to-simt diagnoses what it cannot lower, at the op, and changes nothing.
// RUN: linear-layout-opt --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(ll-to-simt)' %s

// A shared buffer that no ttg.local_alloc of the function created has no workgroup memory.
#row = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 4 : i32} {
  func.func @foreign(%m: !ttg.memdesc<[32, 32], f32, #shared, #smem, "mutable">) {
    // expected-error@+1 {{the shared buffer does not come from a ttg.local_alloc of this function}}
    %x = "ttg.local_load"(%m) : (!ttg.memdesc<[32, 32], f32, #shared, #smem, "mutable">) -> tensor<32x32xf32, #row>
    return
  }
}

// -----

// An op on tensors that has no SIMT lowering.
#row = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  func.func @empty(%in: memref<32x32xf32>) {
    // expected-error@+1 {{'tensor.empty' on tensors cannot be lowered to SIMT form}}
    %a = "tensor.empty"() : () -> tensor<32x32xf32, #row>
    return
  }
}

// -----

// More warps than a block can hold.
#many = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [64], order = [0]}>
module attributes {"ttg.num-warps" = 64 : i32} {
  // expected-error@+1 {{too many warps for the launch: 64 warps x 32 threads = 2048 threads}}
  func.func @huge(%in: memref<2048xf32>) {
    %x = "ll.load"(%in) : (memref<2048xf32>) -> tensor<2048xf32, #many>
    return
  }
}

// -----

// Tensor arguments have no per-thread meaning.
#row = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  // expected-error@+1 {{tensor arguments cannot be lowered}}
  func.func @tensor_arg(%x: tensor<32x32xf32, #row>) {
    return
  }
}

// -----

// Layouts of one conversion over different output dimensions.
#a = #ll.layout<[["register", [[1, 0]]], ["lane", [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]], ["warp", []], ["block", []]], [["dim0", 2], ["dim1", 32]]>
#b = #ll.layout<[["register", [[1, 0]]], ["lane", [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]], ["warp", []], ["block", []]], [["row", 2], ["col", 32]]>
module attributes {"ttg.num-warps" = 1 : i32} {
  func.func @mismatch(%in: memref<2x32xf32>) {
    %x = "ll.load"(%in) : (memref<2x32xf32>) -> tensor<2x32xf32, #a>
    // expected-error@+1 {{the layouts cover different shapes}}
    %y = "ttg.convert_layout"(%x) : (tensor<2x32xf32, #a>) -> tensor<2x32xf32, #b>
    return
  }
}
