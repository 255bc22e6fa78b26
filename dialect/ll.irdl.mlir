// linear-layout's own dialect, in IRDL.
//
// #ll.layout holds any LinearLayout. Its two parameters are arrays, not dictionaries, because
// DictionaryAttr sorts its keys and the order of dimensions is part of the layout:
//   #ll.layout<[["register", [[0, 1]]], ["lane", [[1, 0], [2, 0]]]], [["dim0", 4], ["dim1", 2]]>
// The first array lists the input dimensions in order, each with its bases (one coordinate per
// output dimension); the second lists the output dimensions in order with their sizes.
// ll-verify checks the rest (names distinct, sizes powers of two, bases in range, coverage).
irdl.dialect @ll {
  irdl.attribute @layout {
    %in_dims = irdl.base "#builtin.array"
    %out_dims = irdl.base "#builtin.array"
    irdl.parameters(in_dims: %in_dims, out_dims: %out_dims)
  }

  // Maps hardware indices to tensor coordinates through `layout`: one integer operand per
  // input dimension (in order), one result per output dimension (in order).
  irdl.operation @apply {
    %i = irdl.is i32
    %j = irdl.is i64
    %k = irdl.is index
    %index = irdl.any_of(%i, %j, %k)
    %r32 = irdl.is i32
    %r64 = irdl.is i64
    %rindex = irdl.is index
    %coordinate = irdl.any_of(%r32, %r64, %rindex)
    %layout = irdl.base @ll::@layout
    irdl.attributes {"layout" = %layout}
    irdl.operands(indices: variadic %index)
    irdl.results(coordinates: variadic %coordinate)
  }

  // Loads the tile of `memref` starting at `offsets` (one index per dimension, or none for the
  // origin) into a tensor distributed by the result's encoding.
  irdl.operation @load {
    %memref = irdl.base "!builtin.memref"
    %offset = irdl.is index
    %result = irdl.base "!builtin.tensor"
    irdl.operands(memref: %memref, offsets: variadic %offset)
    irdl.results(result: %result)
  }

  // Stores a distributed tensor into the tile of `memref` starting at `offsets`.
  irdl.operation @store {
    %value = irdl.base "!builtin.tensor"
    %memref = irdl.base "!builtin.memref"
    %offset = irdl.is index
    irdl.operands(value: %value, memref: %memref, offsets: variadic %offset)
    irdl.results()
  }
}
