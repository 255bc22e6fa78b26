"""The TTGIR reader and writer on loops and ifs with ONE result, of every type family: MLIR prints
a single `scf.while` result type without parentheses (`-> !ttg.memdesc<...> {`), `scf.for` and
`scf.if` with them; each form is read with the right type and written back byte for byte."""

from __future__ import annotations

import pytest

from linear_layout.ttgir import parse_ttgir, print_ttgir

HEAD = """#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#loc = loc("k.py":1:0)
{block_loc}#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%arg0: i32 loc("k.py":1:0), %arg1: !tt.ptr<f32> loc("k.py":1:0)) attributes {noinline = false} {
    %c0_i32 = arith.constant 0 : i32 loc(#loc1)
    %c1_i32 = arith.constant 1 : i32 loc(#loc1)
    %cst = arith.constant dense<0> : tensor<128xi32, #blocked> loc(#loc1)
    %0 = ttg.local_alloc : () -> !ttg.memdesc<2x128xf32, #shared, #smem, mutable> loc(#loc1)
    %1 = ttg.memdesc_index %0[%c0_i32] : !ttg.memdesc<2x128xf32, #shared, #smem, mutable> -> {view} loc(#loc1)
    %2 = ttg.async_commit_group loc(#loc1)
    %3 = arith.cmpi slt, %c0_i32, %arg0 : i32 loc(#loc1)
"""
TAIL = """    tt.return loc(#loc2)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("k.py":2:4)
#loc2 = loc("k.py":3:4)
"""
VIEW = "!ttg.memdesc<128xf32, #shared, #smem, mutable, 2x128>"
#: family -> (type as written, a value of it, the start of the type MLIR reads)
FAMILIES = {
    "tensor": ("tensor<128xi32, #blocked>", "%cst", "tensor<128xi32, #ttg.blocked<"),
    "memdesc": ("!ttg.memdesc<2x128xf32, #shared, #smem, mutable>", "%0", "!ttg.memdesc<[2, 128], f32,"),
    "memdesc view": (VIEW, "%1", "!ttg.memdesc_view<"),
    "ptr": ("!tt.ptr<f32>", "%arg1", "!tt.ptr<f32>"),
    "token": ("!ttg.async.token", "%2", "!ttg.async_token"),
}
FORMS = {
    "while": """    %4 = scf.while (%arg2 = {value}) : ({type}) -> {type} {{
      scf.condition(%3) %arg2 : {type} loc(#loc1)
    }} do {{
    ^bb0(%arg2: {type} loc("k.py":2:4)):
      scf.yield %arg2 : {type} loc(#loc1)
    }} loc(#loc1)
""",
    "for": """    %4 = scf.for %arg2 = %c0_i32 to %arg0 step %c1_i32 iter_args(%arg3 = {value}) -> ({type})  : i32 {{
      scf.yield %arg3 : {type} loc(#loc1)
    }} loc(#loc1)
""",
    "if": """    %4 = scf.if %3 -> ({type}) {{
      scf.yield {value} : {type} loc(#loc1)
    }} else {{
      scf.yield {value} : {type} loc(#loc1)
    }} loc(#loc1)
""",
}


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("form", FORMS)
def test_a_single_result_is_read_right_and_written_back_byte_for_byte(form, family):
    written, value, read = FAMILIES[family]
    # MLIR prints the alias of a location a block argument uses (scf.while's `do` block) before the module
    block_loc = '#loc1 = loc("k.py":2:4)\n' if form == "while" else ""
    tail = TAIL.replace('#loc1 = loc("k.py":2:4)\n', "") if form == "while" else TAIL
    head = HEAD.replace("{view}", VIEW).replace("{block_loc}", block_loc)
    text = head + FORMS[form].format(type=written, value=value) + tail
    module = parse_ttgir(text)
    (loop,) = [op for op in module.body.operations[0].regions[0].blocks[0].operations if op.name.startswith("scf.")]
    assert len(loop.results) == 1 and str(loop.results[0].type).startswith(read), loop.results[0].type
    assert print_ttgir(module) == text
