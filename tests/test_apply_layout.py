"""`emit_apply_layout`: the arith index math of every lowering, checked by JIT execution.

Each generated layout is emitted as one function per output dimension, compiled with MLIR's
ExecutionEngine on the CPU, and run on sampled hardware indices; the results must equal
`LinearLayout.apply`. Constant inputs (Python ints and `arith.constant`) must fold away.
"""

import ctypes

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ir = pytest.importorskip("mlir.ir")
from mlir.dialects import arith, func  # noqa: E402
from mlir.execution_engine import ExecutionEngine  # noqa: E402
from mlir.passmanager import PassManager  # noqa: E402

from linear_layout import LinearLayout  # noqa: E402
from linear_layout.patterns.apply_layout import emit_apply_layout  # noqa: E402

IN_DIMS = ("register", "lane", "warp", "block")
SEED_BLOCKED = LinearLayout.from_bases(
    [("register", [[4, 0], [8, 0], [16, 0]]), ("lane", [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]),
     ("warp", [[1, 0], [2, 0]])],
    ["dim0", "dim1"],
)


@st.composite
def layouts(draw):
    out_sizes = draw(st.lists(st.integers(0, 6), min_size=1, max_size=3))
    out_names = [f"dim{k}" for k in range(len(out_sizes))]
    bases = []
    for name in IN_DIMS:
        count = draw(st.integers(0, 5))
        bases.append((name, [[draw(st.integers(0, (1 << n) - 1)) for n in out_sizes] for _ in range(count)]))
    return LinearLayout.from_bases(bases, out_names, [1 << n for n in out_sizes], require_surjective=False)


def _emit(layout, symbolic, constants):
    """A module with one `i32 (symbolic indices...)` function per output dimension."""
    module = ir.Module.create()
    i32 = ir.IntegerType.get_signless(32)
    with ir.InsertionPoint(module.body):
        for k, out in enumerate(layout.get_out_dim_names()):
            fn = func.FuncOp(f"out{k}", ([i32] * len(symbolic), [i32]))
            fn.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            entry = fn.add_entry_block()
            with ir.InsertionPoint(entry):
                indices = dict(zip(symbolic, entry.arguments))
                for name, value in constants.items():
                    # Alternate the two spellings of a constant index.
                    indices[name] = value if value % 2 else arith.constant(i32, value)
                func.return_([emit_apply_layout(layout, indices)[out]])
    return module


def _run(module, name, args):
    PassManager.parse(
        "builtin.module(convert-arith-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts)"
    ).run(module.operation)
    engine = ExecutionEngine(module)
    results = {}
    for point in args:
        for k in range(len(name)):
            out = ctypes.c_int32(0)
            engine.invoke(f"out{k}", *(ctypes.pointer(ctypes.c_int32(v)) for v in point), ctypes.pointer(out))
            results[(point, k)] = out.value
    return results


@settings(max_examples=200, deadline=None)
@given(layout=layouts(), data=st.data())
def test_emitted_index_math_equals_apply(layout, data):
    constant_dims = data.draw(st.sets(st.sampled_from(IN_DIMS)))
    symbolic = [d for d in IN_DIMS if d not in constant_dims]
    constants = {d: data.draw(st.integers(0, layout.get_in_dim_size(d) - 1)) for d in constant_dims}
    points = data.draw(st.lists(
        st.tuples(*(st.integers(0, layout.get_in_dim_size(d) - 1) for d in symbolic)), min_size=1, max_size=16))
    with ir.Context(), ir.Location.unknown():
        module = _emit(layout, symbolic, constants)
        results = _run(module, layout.get_out_dim_names(), points)
    for point in points:
        expected = layout.apply({**constants, **dict(zip(symbolic, point))})
        for k, out in enumerate(layout.get_out_dim_names()):
            assert results[(point, k)] == expected[out], (point, out)


def test_seed_example_with_symbolic_indices_executes_to_22_3():
    with ir.Context(), ir.Location.unknown():
        module = _emit(SEED_BLOCKED, ["register", "lane", "warp"], {})
        results = _run(module, ["dim0", "dim1"], [(5, 3, 2)])
    assert (results[((5, 3, 2), 0)], results[((5, 3, 2), 1)]) == (22, 3)


def _ops_of(module):
    return [op.operation.name for fn in module.body.operations for op in fn.regions[0].blocks[0].operations]


def test_all_constant_inputs_fold_to_constants():
    with ir.Context(), ir.Location.unknown():
        module = _emit(SEED_BLOCKED, [], {"register": 5, "lane": 3, "warp": 2})
        ops = _ops_of(module)
        assert set(ops) == {"arith.constant", "func.return"}
        assert "arith.constant 22 : i32" in str(module) and "arith.constant 3 : i32" in str(module)


def test_symbolic_inputs_use_one_masked_shift_per_diagonal():
    # Packed x = register | lane << 3 | warp << 8 (2 shli + 2 ori). dim1 = lane = (x & 0xF8) >> 3:
    # one diagonal. dim0 = register << 2 | warp = ((x & 7) << 2) | ((x & 0x300) >> 8): two
    # diagonals on disjoint bits, combined with one ori. No xori anywhere.
    with ir.Context(), ir.Location.unknown():
        module = _emit(SEED_BLOCKED, ["register", "lane", "warp"], {})
        first_function = [op.operation.name for op in module.body.operations[0].regions[0].blocks[0].operations]
    arithmetic = [name for name in first_function if name not in ("arith.constant", "func.return")]
    assert sorted(arithmetic) == sorted(
        ["arith.shli"] * 3 + ["arith.shrui"] * 2 + ["arith.ori"] * 3 + ["arith.andi"] * 3
    )


def test_broadcast_input_emits_nothing_but_the_folded_constant():
    # lane has only zero bases: whatever its value, dim0 = warp's constant contribution.
    layout = LinearLayout.from_bases([("lane", [[0], [0]]), ("warp", [[1]])], ["dim0"])
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        i32 = ir.IntegerType.get_signless(32)
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("f", ([i32], [i32]))
            entry = fn.add_entry_block()
            with ir.InsertionPoint(entry):
                func.return_([emit_apply_layout(layout, {"lane": entry.arguments[0], "warp": 1})["dim0"]])
        assert _ops_of(module) == ["arith.constant", "func.return"]
        assert "arith.constant 1 : i32" in str(module)


def test_overlapping_outputs_combine_with_xor():
    # lane=1 -> 3 and lane=2 -> 1 both set output bit 0, so those terms must XOR.
    layout = LinearLayout.from_bases([("lane", [[3], [1]])], ["dim0"], [4], require_surjective=False)
    with ir.Context(), ir.Location.unknown():
        module = _emit(layout, ["lane"], {})
        assert "arith.xori" in _ops_of(module)
        results = _run(module, ["dim0"], [(0,), (1,), (2,), (3,)])
    assert [results[((v,), 0)] for v in range(4)] == [0, 3, 1, 2]


def test_missing_index_is_a_value_error():
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body), pytest.raises(ValueError, match="exactly the input dimensions"):
            emit_apply_layout(SEED_BLOCKED, {"register": 0, "lane": 0})
