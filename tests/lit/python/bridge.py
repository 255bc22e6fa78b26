# The attribute bridge and the op builders, from Python.
# RUN: %PYTHON %s | FileCheck %s

from mlir import ir
from mlir.dialects import func

from linear_layout import LinearLayout
from linear_layout.dialects import ll, ttg, verify
from linear_layout.encodings import parse_encoding
from linear_layout.ir import cache_info, from_attribute, layout_of, load_dialects, print_module, to_attribute

with ir.Context() as ctx, ir.Location.unknown():
    load_dialects(ctx)
    load_dialects(ctx)  # idempotent: a second IRDL load would abort the process

    # A LinearLayout keeps its dimension order through the attribute.
    layout = LinearLayout.from_bases([("warp", [[0, 2]]), ("register", [[0, 1], [1, 0]])], ["y", "x"])
    attr = to_attribute(layout)
    # CHECK: #ll.layout<{{\[\[}}"warp", {{\[\[}}0, 2]]], ["register", {{\[\[}}0, 1], [1, 0]]]], {{\[\[}}"y", 2], ["x", 4]]>
    print(attr)
    # CHECK-NEXT: True
    print(from_attribute(attr) == layout)

    # An encoding dataclass becomes a #ttg attribute (keys sorted by MLIR) and comes back equal.
    blocked = parse_encoding("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>")
    blocked_attr = to_attribute(blocked)
    # CHECK-NEXT: #ttg.blocked<{order = [1, 0], sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1]}>
    print(blocked_attr)
    # CHECK-NEXT: True
    print(from_attribute(blocked_attr) == blocked)

    f32 = ir.F32Type.get()
    src_type = ir.RankedTensorType.get([64, 64], f32, blocked_attr)
    module = ir.Module.create()
    module.operation.attributes["ttg.num-warps"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4)
    with ir.InsertionPoint(module.body):
        i32 = ir.IntegerType.get_signless(32)

        @func.FuncOp.from_py_func(src_type, i32, i32)
        def kernel(x, register, warp):
            shared = to_attribute(parse_encoding("#ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>"))
            buffer = ttg.local_alloc(ttg.memdesc_type([64, 64], f32, shared), x)
            loaded = ttg.local_load(src_type, buffer)
            ttg.convert_layout(src_type, loaded)
            return ll.apply(layout, [warp, register])

    # CHECK-NEXT: []
    print(verify(module))
    # CHECK: #blocked = #ttg.blocked
    # CHECK: "ttg.local_alloc"(%arg0) : (tensor<64x64xf32, #blocked>) -> !ttg.memdesc<[64, 64], f32, #shared, #smem, "mutable">
    # CHECK: "ttg.local_load"
    # CHECK: "ttg.convert_layout"
    # CHECK: "ll.apply"(%arg2, %arg1) {layout = #layout} : (i32, i32) -> (i32, i32)
    print(print_module(module))

    # The tensor type's LinearLayout comes from its encoding and shape, and is cached.
    # CHECK: where out dims are: [dim0 (size 64), dim1 (size 64)]
    print(layout_of(src_type))
    before = cache_info()["hits"]
    layout_of(src_type)
    # CHECK-NEXT: cache hit: True
    print("cache hit:", cache_info()["hits"] == before + 1)
