// One case per verifier rule: each chunk must produce exactly the expected error at the op.
// RUN: linear-layout-opt %s --split-input-file --verify-diagnostics

// IRDL: an encoding takes one dictionary.
// expected-error@+1 {{expected base attribute 'builtin.dictionary' but got 'builtin.array'}}
func.func @not_a_dictionary(%a: tensor<4xf32, #ttg.blocked<[1]>>) {
  return
}

// -----

// expected-error@+1 {{invalid encoding #ttg.blocked: size_per_thread}}
func.func @not_power_of_two(%a: tensor<8xf32, #ttg.blocked<{sizePerThread = [3], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>>) {
  return
}

// -----

// expected-error@+1 {{#ttg.blocked is missing the field threadsPerWarp}}
func.func @missing_field(%a: tensor<8xf32, #ttg.blocked<{sizePerThread = [1], warpsPerCTA = [1], order = [0]}>>) {
  return
}

// -----

// expected-error@+1 {{#ttg.blocked has rank 1 but tensor<8x8xf32}}
func.func @rank_mismatch(%a: tensor<8x8xf32, #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>>) {
  return
}

// -----

// expected-error@+1 {{#ttg.nvmma_shared cannot lay out !ttg.memdesc of shape [16, 16]}}
func.func @too_narrow_for_swizzle(%a: !ttg.memdesc<[16, 16], f16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>, #ttg.shared_memory, "mutable">) {
  return
}

// -----

// expected-error@+1 {{a tensor needs a distributed encoding, got the shared-memory #ttg.swizzled_shared}}
func.func @shared_on_tensor(%a: tensor<8x8xf16, #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>>) {
  return
}

// -----

// expected-error@+1 {{!ttg.memdesc needs a shared-memory encoding, got the distributed #ttg.blocked}}
func.func @distributed_in_shared(%a: !ttg.memdesc<[32], f16, #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>, #ttg.shared_memory, "mutable">) {
  return
}

// -----

// IRDL: mutability is "mutable" or "immutable".
// expected-error@+1 {{'"writable"' does not satisfy the constraint}}
func.func @bad_mutability(%a: !ttg.memdesc<[32], f16, #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>, #ttg.shared_memory, "writable">) {
  return
}

// -----

module attributes {"ttg.num-warps" = 8 : i32} {
  // expected-error@+1 {{#ttg.blocked spreads the tensor over 4 warps, but the kernel has ttg.num-warps = 8}}
  func.func @num_warps(%a: tensor<128xf32, #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>) {
    return
  }
}

// -----

module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 64 : i32} {
  // expected-error@+1 {{spreads the tensor over 32 lanes, but the kernel has ttg.threads-per-warp = 64}}
  func.func @threads_per_warp(%a: tensor<128xf32, #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>) {
    return
  }
}

// -----

// expected-error@+1 {{invalid #ll.layout: basis coordinate 8 of basis [8] is out of range for output dimension 'dim0' of size 8}}
func.func @basis_out_of_range(%a: tensor<8xf32, #ll.layout<[["register", [[1], [8]]]], [["dim0", 8]]>>) {
  return
}

// -----

// expected-error@+1 {{invalid #ll.layout: size of output dimension 'dim0' must be a power of two, got 6}}
func.func @size_not_power_of_two(%a: tensor<6xf32, #ll.layout<[["register", [[1]]]], [["dim0", 6]]>>) {
  return
}

// -----

// expected-error@+1 {{invalid #ll.layout: input dimension names must be distinct}}
func.func @duplicate_names(%a: tensor<4xf32, #ll.layout<[["register", [[1]]], ["register", [[2]]]], [["dim0", 4]]>>) {
  return
}

// -----

// expected-error@+1 {{#ll.layout: each input dimension must be ["name", ...]}}
func.func @malformed_ll_layout(%a: tensor<4xf32, #ll.layout<[[1, 2]], [["dim0", 4]]>>) {
  return
}

// -----

// expected-error@+1 {{#ll.layout does not cover tensor<8xf32, #ll.layout<[["register", [[1], [2]]]], [["dim0", 4]]>>: its output dimension sizes are [4]}}
func.func @does_not_cover_shape(%a: tensor<8xf32, #ll.layout<[["register", [[1], [2]]]], [["dim0", 4]]>>) {
  return
}

// -----

// expected-error@+1 {{#ll.layout does not cover tensor<4xf32, #ll.layout<[["register", [[1], [1]]]], [["dim0", 4]]>>: its bases reach only 2**1 of the 4 elements}}
func.func @not_surjective(%a: tensor<4xf32, #ll.layout<[["register", [[1], [1]]]], [["dim0", 4]]>>) {
  return
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
func.func @convert_changes_shape(%a: tensor<32xf32, #blocked>) {
  // expected-error@+1 {{'ttg.convert_layout' op must keep shape and element type: the source is [32] x f32 but the result is [64] x f32}}
  %0 = "ttg.convert_layout"(%a) : (tensor<32xf32, #blocked>) -> tensor<64xf32, #blocked>
  return
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
func.func @convert_changes_element_type(%a: tensor<32xf32, #blocked>) {
  // expected-error@+1 {{'ttg.convert_layout' op must keep shape and element type}}
  %0 = "ttg.convert_layout"(%a) : (tensor<32xf32, #blocked>) -> tensor<32xf16, #blocked>
  return
}

// -----

// IRDL: convert_layout takes a tensor.
func.func @convert_a_scalar(%a: f32) {
  // expected-error@+1 {{expected base type 'builtin.tensor' but got 'builtin.f32'}}
  %0 = "ttg.convert_layout"(%a) : (f32) -> tensor<32xf32>
  return
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
func.func @alloc_mismatch(%a: tensor<32xf32, #blocked>) {
  // expected-error@+1 {{'ttg.local_alloc' op must keep shape and element type: the source is [32] x f32 but the buffer is [32] x f16}}
  %0 = "ttg.local_alloc"(%a) : (tensor<32xf32, #blocked>) -> !ttg.memdesc<[32], f16, #shared, #ttg.shared_memory, "mutable">
  return
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
func.func @load_mismatch(%m: !ttg.memdesc<[32], f32, #shared, #ttg.shared_memory, "mutable">) {
  // expected-error@+1 {{'ttg.local_load' op must keep shape and element type: the buffer is [32] x f32 but the result is [64] x f32}}
  %0 = "ttg.local_load"(%m) : (!ttg.memdesc<[32], f32, #shared, #ttg.shared_memory, "mutable">) -> tensor<64xf32, #blocked>
  return
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
func.func @store_immutable(%a: tensor<32xf32, #blocked>, %m: !ttg.memdesc<[32], f32, #shared, #ttg.shared_memory, "immutable">) {
  // expected-error@+1 {{'ttg.local_store' op cannot store into an immutable buffer}}
  "ttg.local_store"(%a, %m) : (tensor<32xf32, #blocked>, !ttg.memdesc<[32], f32, #shared, #ttg.shared_memory, "immutable">) -> ()
  return
}

// -----

#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
func.func @store_mismatch(%a: tensor<32xf32, #blocked>, %m: !ttg.memdesc<[32], i32, #shared, #ttg.shared_memory, "mutable">) {
  // expected-error@+1 {{'ttg.local_store' op must keep shape and element type: the value is [32] x f32 but the buffer is [32] x i32}}
  "ttg.local_store"(%a, %m) : (tensor<32xf32, #blocked>, !ttg.memdesc<[32], i32, #shared, #ttg.shared_memory, "mutable">) -> ()
  return
}

// -----

func.func @apply_operand_count(%i: i32) {
  // expected-error@+1 {{'ll.apply' op takes one index per input dimension ['register', 'lane'], got 1}}
  %0 = "ll.apply"(%i) {layout = #ll.layout<[["register", [[1]]], ["lane", [[2]]]], [["dim0", 4]]>} : (i32) -> i32
  return
}

// -----

func.func @apply_result_count(%i: i32) {
  // expected-error@+1 {{'ll.apply' op returns one coordinate per output dimension ['dim0'], got 2}}
  %0:2 = "ll.apply"(%i) {layout = #ll.layout<[["register", [[1]]]], [["dim0", 2]]>} : (i32) -> (i32, i32)
  return
}

// -----

// IRDL: ll.apply needs its layout attribute.
func.func @apply_without_layout(%i: i32) {
  // expected-error@+1 {{'ll.apply' op attribute "layout" is expected but not provided}}
  %0 = "ll.apply"(%i) : (i32) -> i32
  return
}

// -----

#l = #ll.layout<[["register", [[1], [2]]]], [["dim0", 4]]>
func.func @tile_element_type(%m: memref<16xf16>) {
  // expected-error@+1 {{'ll.load' op element types differ: the tensor has f32, the memref f16}}
  %0 = "ll.load"(%m) : (memref<16xf16>) -> tensor<4xf32, #l>
  return
}

// -----

#l = #ll.layout<[["register", [[1], [2]]]], [["dim0", 4]]>
func.func @tile_rank(%m: memref<4x4xf32>) {
  // expected-error@+1 {{'ll.load' op ranks differ: the tensor has rank 1, the memref rank 2}}
  %0 = "ll.load"(%m) : (memref<4x4xf32>) -> tensor<4xf32, #l>
  return
}

// -----

#l = #ll.layout<[["register", [[1], [2]]]], [["dim0", 4]]>
func.func @tile_offsets(%m: memref<16xf32>, %i: index) {
  // expected-error@+1 {{'ll.load' op takes no offsets or one per dimension (1), got 2}}
  %0 = "ll.load"(%m, %i, %i) : (memref<16xf32>, index, index) -> tensor<4xf32, #l>
  return
}

// -----

#l = #ll.layout<[["register", [[1], [2], [4]]]], [["dim0", 8]]>
func.func @tile_does_not_fit(%t: tensor<8xf32, #l>, %m: memref<4xf32>) {
  // expected-error@+1 {{'ll.store' op the tile [8] does not fit the memref [4] (dimension 0)}}
  "ll.store"(%t, %m) : (tensor<8xf32, #l>, memref<4xf32>) -> ()
  return
}

// -----

func.func @tile_without_layout(%m: memref<4xf32>) {
  // expected-error@+1 {{'ll.load' op needs a tensor with a layout encoding, got tensor<4xf32>}}
  %0 = "ll.load"(%m) : (memref<4xf32>) -> tensor<4xf32>
  return
}
