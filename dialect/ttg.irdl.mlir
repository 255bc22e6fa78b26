// The Triton GPU dialect subset used by linear-layout, in IRDL.
//
// Every encoding takes a single dictionary parameter so that it is written exactly as
// Triton writes it, e.g. #ttg.blocked<{sizePerThread = [1, 1], ...}>. IRDL only checks the
// shape of the syntax; the rules (powers of two, ranks, coverage) are checked by ll-verify,
// which runs after parsing. Operations have no custom assembly: write them in generic form.
irdl.dialect @ttg {
  // distributed: each thread owns a sizePerThread block; threads then warps tile the tensor in `order`
  irdl.attribute @blocked {
    %fields = irdl.base "#builtin.dictionary"
    irdl.parameters(fields: %fields)
  }

  // distributed: `parent` with dimension `dim` removed
  irdl.attribute @slice {
    %fields = irdl.base "#builtin.dictionary"
    irdl.parameters(fields: %fields)
  }

  // distributed: an explicit linear layout (register/lane/warp/block bases)
  irdl.attribute @linear {
    %fields = irdl.base "#builtin.dictionary"
    irdl.parameters(fields: %fields)
  }

  // distributed: any surjective explicit linear layout (Triton 3.9's GenericLinearEncodingAttr);
  // #ttg.linear must be a permutation matrix once its zero bases are dropped
  irdl.attribute @generic_linear {
    %fields = irdl.base "#builtin.dictionary"
    irdl.parameters(fields: %fields)
  }

  // distributed: NVIDIA MMA accumulator (versionMajor 2 = Ampere, 3 = Hopper)
  irdl.attribute @nvidia_mma {
    %fields = irdl.base "#builtin.dictionary"
    irdl.parameters(fields: %fields)
  }

  // distributed: operand `opIdx` of a dot whose result has layout `parent`
  irdl.attribute @dot_op {
    %fields = irdl.base "#builtin.dictionary"
    irdl.parameters(fields: %fields)
  }

  // distributed: AMD MFMA accumulator
  irdl.attribute @amd_mfma {
    %fields = irdl.base "#builtin.dictionary"
    irdl.parameters(fields: %fields)
  }

  // distributed: AMD WMMA accumulator
  irdl.attribute @amd_wmma {
    %fields = irdl.base "#builtin.dictionary"
    irdl.parameters(fields: %fields)
  }

  // shared: XOR-swizzled shared memory (vec, perPhase, maxPhase, order)
  irdl.attribute @swizzled_shared {
    %fields = irdl.base "#builtin.dictionary"
    irdl.parameters(fields: %fields)
  }

  // shared: the NVMMA (wgmma/tma) shared-memory swizzle
  irdl.attribute @nvmma_shared {
    %fields = irdl.base "#builtin.dictionary"
    irdl.parameters(fields: %fields)
  }

  // shared: an explicit linear layout (offset/block bases); `alignment` lives inside the dictionary
  irdl.attribute @shared_linear {
    %fields = irdl.base "#builtin.dictionary"
    irdl.parameters(fields: %fields)
  }

  // The memory space of a shared-memory descriptor (Triton's #ttg.shared_memory).
  irdl.attribute @shared_memory {
    irdl.parameters()
  }

  // A view of a buffer in shared memory: !ttg.memdesc<[32, 32], f16, #shared, #ttg.shared_memory, "mutable">.
  // Triton writes !ttg.memdesc<32x32xf16, #shared, #smem, mutable>; IRDL parameters are
  // attributes, so the shape is an array and mutability is a string.
  irdl.type @memdesc {
    %shape = irdl.base "#builtin.array"
    %element_type = irdl.any
    %encoding = irdl.any
    %memory_space = irdl.base @ttg::@shared_memory
    %mutable = irdl.is "mutable"
    %immutable = irdl.is "immutable"
    %mutability = irdl.any_of(%mutable, %immutable)
    irdl.parameters(shape: %shape, element_type: %element_type, encoding: %encoding, memory_space: %memory_space, mutability: %mutability)
  }

  // Triton's memdesc whose allocation is larger than its shape (a subslice):
  // !ttg.memdesc<8x128xf32, #shared, #smem, mutable, 32x128> is
  // !ttg.memdesc_view<[8, 128], f32, #shared, #ttg.shared_memory, "mutable", [32, 128]>.
  irdl.type @memdesc_view {
    %shape = irdl.base "#builtin.array"
    %element_type = irdl.any
    %encoding = irdl.any
    %memory_space = irdl.base @ttg::@shared_memory
    %mutable = irdl.is "mutable"
    %immutable = irdl.is "immutable"
    %mutability = irdl.any_of(%mutable, %immutable)
    %alloc_shape = irdl.base "#builtin.array"
    irdl.parameters(shape: %shape, element_type: %element_type, encoding: %encoding, memory_space: %memory_space, mutability: %mutability, alloc_shape: %alloc_shape)
  }

  // Triton's !ttg.async.token (IRDL names cannot contain a dot).
  irdl.type @async_token {
    irdl.parameters()
  }

  // shared: AMD's rotating swizzle (vec, perPhase, maxPhase, order)
  irdl.attribute @amd_rotating_shared {
    %fields = irdl.base "#builtin.dictionary"
    irdl.parameters(fields: %fields)
  }

  // shared: padded shared memory (padding intervals and a linear component)
  irdl.attribute @padded_shared {
    %fields = irdl.base "#builtin.dictionary"
    irdl.parameters(fields: %fields)
  }

  // The TTGIR ops below are read from Triton's text by linear_layout.ttgir; their operand and
  // result constraints are loose: Triton verified them when it printed the kernel.
  irdl.operation @local_dealloc {
    %src = irdl.any
    irdl.operands(src: %src)
    irdl.results()
  }

  irdl.operation @memdesc_index {
    %src = irdl.any
    %index = irdl.any
    %result = irdl.any
    irdl.operands(src: %src, index: %index)
    irdl.results(result: %result)
  }

  irdl.operation @memdesc_subslice {
    %src = irdl.any
    %result = irdl.any
    irdl.operands(src: %src)
    irdl.results(result: %result)
  }

  irdl.operation @memdesc_trans {
    %src = irdl.any
    %result = irdl.any
    irdl.operands(src: %src)
    irdl.results(result: %result)
  }

  irdl.operation @warp_id {
    %result = irdl.any
    irdl.operands()
    irdl.results(result: %result)
  }

  irdl.operation @global_scratch_alloc {
    %result = irdl.any
    irdl.operands()
    irdl.results(result: %result)
  }

  irdl.operation @memdesc_reinterpret {
    %src = irdl.any
    %result = irdl.any
    irdl.operands(src: %src)
    irdl.results(result: %result)
  }

  irdl.operation @local_gather {
    %src = irdl.any
    %indices = irdl.any
    %result = irdl.any
    irdl.operands(src: %src, indices: %indices)
    irdl.results(result: %result)
  }

  irdl.operation @local_scatter {
    %dst = irdl.any
    %values = irdl.any
    %indices = irdl.any
    irdl.operands(dst: %dst, values: %values, indices: %indices)
    irdl.results()
  }

  irdl.operation @inline_asm {
    %args = irdl.any
    %result = irdl.any
    irdl.operands(args: variadic %args)
    irdl.results(result: variadic %result)
  }

  irdl.operation @predicate_stage {
    %iv = irdl.any
    %ub = irdl.any
    %step = irdl.any
    %result = irdl.any
    irdl.operands(iv: %iv, ub: %ub, step: %step)
    irdl.results(result: %result)
  }

  irdl.operation @local_atomic_scatter_rmw {
    %dst = irdl.any
    %indices = irdl.any
    %values = irdl.any
    %result = irdl.any
    irdl.operands(dst: %dst, indices: %indices, values: %values)
    irdl.results(result: %result)
  }

  irdl.operation @memdesc_reshape {
    %src = irdl.any
    %result = irdl.any
    irdl.operands(src: %src)
    irdl.results(result: %result)
  }

  irdl.operation @async_copy_global_to_local {
    %src = irdl.any
    %dst = irdl.any
    %mask = irdl.any
    %other = irdl.any
    %token = irdl.base @ttg::@async_token
    irdl.operands(src: %src, result: %dst, mask: optional %mask, other: optional %other)
    irdl.results(token: %token)
  }

  irdl.operation @async_commit_group {
    %input = irdl.base @ttg::@async_token
    %token = irdl.base @ttg::@async_token
    irdl.operands(input_tokens: variadic %input)
    irdl.results(async_token: %token)
  }

  // Triton's CTA barrier over the address spaces named by `addrSpace` (`ttg.barrier local`,
  // written into gfx942 ping-pong matmuls).
  irdl.operation @barrier {
  }

  irdl.operation @async_wait {
    %input = irdl.base @ttg::@async_token
    %token = irdl.base @ttg::@async_token
    irdl.operands(async_token: variadic %input)
    irdl.results(ret_token: %token)
  }

  // Changes the layout of a tensor; shape and element type are kept.
  irdl.operation @convert_layout {
    %src = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(src: %src)
    irdl.results(result: %result)
  }

  // Allocates a shared-memory buffer, optionally initialised from a tensor.
  irdl.operation @local_alloc {
    %src = irdl.base "!builtin.tensor"
    %result = irdl.base @ttg::@memdesc
    irdl.operands(src: optional %src)
    irdl.results(result: %result)
  }

  // Reads a whole shared-memory buffer into a distributed tensor.
  irdl.operation @local_load {
    // a !ttg.memdesc or !ttg.memdesc_view (irdl.any_of over two symbol bases aborts in MLIR 22)
    %src = irdl.any
    %token = irdl.base @ttg::@async_token
    %result = irdl.base "!builtin.tensor"
    irdl.operands(src: %src, token: optional %token)
    irdl.results(result: %result)
  }

  // Writes a distributed tensor into a mutable shared-memory buffer.
  irdl.operation @local_store {
    %src = irdl.base "!builtin.tensor"
    // a !ttg.memdesc or !ttg.memdesc_view (irdl.any_of over two symbol bases aborts in MLIR 22)
    %dst = irdl.any
    irdl.operands(src: %src, dst: %dst)
    irdl.results()
  }
}
