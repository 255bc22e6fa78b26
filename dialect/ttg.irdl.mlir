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
    %src = irdl.base @ttg::@memdesc
    %result = irdl.base "!builtin.tensor"
    irdl.operands(src: %src)
    irdl.results(result: %result)
  }

  // Writes a distributed tensor into a mutable shared-memory buffer.
  irdl.operation @local_store {
    %src = irdl.base "!builtin.tensor"
    %dst = irdl.base @ttg::@memdesc
    irdl.operands(src: %src, dst: %dst)
    irdl.results()
  }
}
