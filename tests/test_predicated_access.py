"""Predicated global accesses (`ir/ptx_asm.py`): masked `tt.load`/`tt.store` lower to one
predicated `ld.global`/`st.global` in `llvm.inline_asm` without a branch, and the SIMT
interpreter runs exactly those strings, touching memory only on the predicated-on lanes, with
its bounds and alignment checks on them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from linear_layout.ir.ptx_asm import (
    FORMS,
    MAD_WIDE_BYTES,
    MAD_WIDES,
    PREDICATED_ACCESSES,
    PredicatedAtomic,
    access_of,
    asm_of,
    atomic_of,
    mad_wide,
    predicated_atomic,
    predicated_load,
    predicated_store,
)
from linear_layout.simt.errors import MemoryAccessError
from linear_layout.simt.interpreter import run_kernel
from linear_layout.tools.kernels import lower_ttgir, ttgir_to_ptx

TTGIR = Path(__file__).parent / "kernel_corpus" / "ttgir"


def _mlir_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace('"', '\\"')


def _copy_kernel(offset: int = 0) -> str:
    """out[t] = x[t + shift] where t < n (the bytes at `extra` + `offset` more, `offset` the
    load's immediate), else the bits 7; then y[t] = out[t] + 1 where t < n, through a
    predicated store."""
    load, load_constraints = predicated_load(1, 32, True, offset)
    store, store_constraints = predicated_store(1, 32)
    return f"""
gpu.module @kernels {{
  gpu.func @k(%x: memref<?xi32>, %out: memref<?xi32>, %y: memref<?xi32>, %n: index, %shift: index,
              %extra: index) kernel attributes {{known_block_size = array<i32: 32, 1, 1>}} {{
    %t = gpu.thread_id x
    %p = arith.cmpi ult, %t, %n : index
    %c4 = arith.constant 4 : index
    %seven = arith.constant 7 : i32
    %one = arith.constant 1 : i32
    %base = memref.extract_aligned_pointer_as_index %x : memref<?xi32> -> index
    %i = arith.addi %t, %shift : index
    %bytes = arith.muli %i, %c4 : index
    %at = arith.addi %base, %bytes : index
    %at2 = arith.addi %at, %extra : index
    %address = arith.index_cast %at2 : index to i64
    %w = llvm.inline_asm "{_mlir_string(load)}", "{load_constraints}" %p, %address, %seven : (i1, i64, i32) -> i32
    memref.store %w, %out[%t] : memref<?xi32>
    %ybase = memref.extract_aligned_pointer_as_index %y : memref<?xi32> -> index
    %tbytes = arith.muli %t, %c4 : index
    %yat = arith.addi %ybase, %tbytes : index
    %yaddress = arith.index_cast %yat : index to i64
    %v = arith.addi %w, %one : i32
    llvm.inline_asm has_side_effects "{_mlir_string(store)}", "{store_constraints}" %v, %p, %yaddress : (i32, i1, i64) -> ()
    gpu.return
  }}
}}
"""


def _run(x: np.ndarray, n: int, shift: int = 0, extra: int = 0, offset: int = 0) -> tuple[np.ndarray, np.ndarray]:
    out, y = np.zeros(32, np.int32), np.full(32, -5, np.int32)
    run_kernel(_copy_kernel(offset), [x, out, y, n, shift, extra], num_blocks=1)
    return out, y


def test_predicated_off_lanes_take_other_and_touch_no_memory():
    x = np.arange(100, 120, dtype=np.int32)  # 20 elements: lanes 20..31 would read past it
    out, y = _run(x, 20)
    assert out[:20].tolist() == x.tolist() and out[20:].tolist() == [7] * 12
    assert y[:20].tolist() == (x + 1).tolist() and y[20:].tolist() == [-5] * 12  # stores skipped


def test_predicated_on_lanes_keep_bounds_and_alignment_checks():
    x = np.arange(20, dtype=np.int32)
    with pytest.raises(MemoryAccessError):
        _run(x, 21)  # lane 20 reads past x
    with pytest.raises(MemoryAccessError, match="not a multiple of 4"):
        _run(x, 4, extra=2)
    out, _ = _run(x, 0, extra=2)  # nobody predicated on: nothing checked, nothing read
    assert out.tolist() == [7] * 32


def test_the_immediate_offset_moves_the_access_and_keeps_its_checks():
    x = np.arange(100, 140, dtype=np.int32)
    out, _ = _run(x, 30, offset=8)  # [ address + 8 ]: two elements further
    assert out[:30].tolist() == x[2:32].tolist() and out[30:].tolist() == [7] * 2
    with pytest.raises(MemoryAccessError):
        _run(x[:31], 30, offset=8)  # lane 29 reads x[31], past the array
    with pytest.raises(MemoryAccessError, match="not a multiple of 4"):
        _run(x, 4, offset=2)


def test_access_of_reads_back_every_form_at_any_offset():
    for access in PREDICATED_ACCESSES.values():
        for offset in (0, 4, 512, 4096):
            moved = access_of(*asm_of(replace(access, offset=offset)))
            assert moved is not None and moved.offset == offset and moved.kind == access.kind
            assert (moved.words, moved.bits, moved.with_other) == (access.words, access.bits, access.with_other)
    assert access_of("mov.b32 $0, $1;", "=r,r") is None
    load, constraints = predicated_load(1, 32, False, 8)
    assert access_of(load, constraints + ",r") is None  # an operand more than the form has


def test_every_predicated_access_is_named_by_its_kind_width_and_predicate():
    assert len(PREDICATED_ACCESSES) == 3 * len(FORMS)  # load, load with other, store of each width
    for (asm, constraints), access in PREDICATED_ACCESSES.items():
        operation = "ld" if access.kind == "load" else "st"
        assert f"{operation}.global" in asm and f".b{access.bits}" in asm and "@$" in asm
        assert (f".v{access.words}" in asm) == (access.words > 1)
        assert constraints.count("b") == 1 and constraints.count("l") >= 1


def test_a_masked_kernel_lowers_without_branches():
    text = (TTGIR / "vadd.sm80.w4.ttgir").read_text()
    lowered = str(lower_ttgir(text))
    accesses = lowered.count("ld.global") + lowered.count("st.global")
    assert "scf.if" not in lowered and accesses == 6  # 2 x 2 loads, 2 stores
    ptx = ttgir_to_ptx(text, chip="sm_80")
    assert "bra" not in ptx and ptx.count("@%p") == 6


def _mad_wide_kernel() -> str:
    """out[t] = x[2t] for t < 32 through one `mad.wide.s32` step: the pointer x + 20 bytes
    advanced by the i32 index 2t - 5 (negative for t < 3: sign-extended)."""
    load, load_constraints = predicated_load(1, 32, False)
    step, step_constraints = mad_wide(4)
    return f"""
gpu.module @kernels {{
  gpu.func @k(%x: memref<?xi32>, %out: memref<?xi32>) kernel attributes {{known_block_size = array<i32: 32, 1, 1>}} {{
    %t = gpu.thread_id x
    %true = arith.constant true
    %c20 = arith.constant 20 : i64
    %two = arith.constant 2 : i32
    %five = arith.constant 5 : i32
    %base = memref.extract_aligned_pointer_as_index %x : memref<?xi32> -> index
    %b64 = arith.index_cast %base : index to i64
    %b20 = arith.addi %b64, %c20 : i64
    %start = llvm.inttoptr %b20 : i64 to !llvm.ptr<1>
    %t32 = arith.index_cast %t : index to i32
    %t2 = arith.muli %t32, %two : i32
    %i = arith.subi %t2, %five : i32
    %at = llvm.inline_asm "{step}", "{step_constraints}" %i, %start : (i32, !llvm.ptr<1>) -> !llvm.ptr<1>
    %address = llvm.ptrtoint %at : !llvm.ptr<1> to i64
    %w = llvm.inline_asm "{_mlir_string(load)}", "{load_constraints}" %true, %address : (i1, i64) -> i32
    memref.store %w, %out[%t] : memref<?xi32>
    gpu.return
  }}
}}
"""


def test_mad_wide_steps_the_pointer_by_the_sign_extended_index():
    x, out = np.arange(1000, 1064, dtype=np.int32), np.zeros(32, np.int32)
    run_kernel(_mad_wide_kernel(), [x, out], num_blocks=1)
    assert out.tolist() == x[::2].tolist()
    assert mad_wide(4) == ("mad.wide.s32 $0, $1, 4, $2;", "=l,r,l") and set(MAD_WIDES.values()) == set(MAD_WIDE_BYTES)


@pytest.mark.parametrize(("stem", "tritons"), [("col_sum.sm80.w1", 63), ("transpose.sm90.w4", 16), ("vadd.sm80.w1", 0)])
def test_an_address_step_is_one_mad_wide_as_tritons(stem, tritons):
    """An i32 offset summand is one `mad.wide.s32` (Triton's `nvptx-mad-wide-opt`), not a
    `mul.wide.s32` and an `add.s64`: at least Triton's `mad.wide`s (`tritons`; Triton's one
    `mul.wide` + `add`s, an offset shared by several pointers, is a `mad.wide` per pointer here),
    none of `mul.wide`, and at most Triton's instructions in all."""
    sys.path.insert(0, str(TTGIR.parent))
    from ptx_stats import ptx_stats

    ptx = ttgir_to_ptx((TTGIR / f"{stem}.ttgir").read_text(), chip="sm_" + stem.split(".")[1][2:])
    assert len(re.findall(r"\bmad\.wide\.s32\b", ptx)) >= max(tritons, 1)
    assert not re.search(r"\bmul\.wide\.s32\b", ptx)
    figures = json.loads((TTGIR.parent / "triton_ptx.json").read_text())
    assert ptx_stats(ptx).instructions <= figures[stem]["instructions"]


def _atomic_kernel(atomic: PredicatedAtomic, element: str) -> str:
    """old[t] = atom(x[t % 4], v[t]) where t < n, by the predicated `atomic` (one thread after
    another); old[t] = 0 elsewhere."""
    asm, constraints = predicated_atomic(atomic)
    return f"""
gpu.module @kernels {{
  gpu.func @k(%x: memref<?x{element}>, %v: memref<?x{element}>, %old: memref<?x{element}>, %n: index)
      kernel attributes {{known_block_size = array<i32: 32, 1, 1>}} {{
    %t = gpu.thread_id x
    %p = arith.cmpi ult, %t, %n : index
    %c4 = arith.constant 4 : index
    %bytes = arith.constant {atomic.bits // 8} : index
    %slot = arith.remui %t, %c4 : index
    %offset = arith.muli %slot, %bytes : index
    %base = memref.extract_aligned_pointer_as_index %x : memref<?x{element}> -> index
    %at = arith.addi %base, %offset : index
    %at64 = arith.index_cast %at : index to i64
    %pointer = llvm.inttoptr %at64 : i64 to !llvm.ptr<1>
    %value = memref.load %v[%t] : memref<?x{element}>
    %w = llvm.inline_asm has_side_effects "{_mlir_string(asm)}", "{constraints}" %pointer, %value, %p
        : (!llvm.ptr<1>, {element}, i1) -> {element}
    memref.store %w, %old[%t] : memref<?x{element}>
    gpu.return
  }}
}}
"""


_ATOMIC_CASES = [
    ("add", "u", "i32", np.int32),
    ("max", "s", "i32", np.int32),
    ("min", "u", "i32", np.int32),
    ("xor", "b", "i64", np.int64),
    ("exch", "b", "i32", np.int32),
    ("add", "f", "f32", np.float32),
]


_REFERENCE = {
    "add": lambda a, b: a + b,
    "max": max,
    "min": min,
    "xor": lambda a, b: a ^ b,
    "exch": lambda a, b: b,
}


@pytest.mark.parametrize(("operation", "kind", "element", "dtype"), _ATOMIC_CASES)
def test_a_predicated_atomic_updates_in_thread_order_and_gives_the_old_values(operation, kind, element, dtype):
    rng = np.random.default_rng(3)
    bits = np.dtype(dtype).itemsize * 8
    atomic = PredicatedAtomic(operation, kind, bits, "acq_rel", "gpu")
    assert atomic_of(*predicated_atomic(atomic)) == atomic
    x = rng.integers(-50, 50, 4).astype(dtype)
    v = rng.integers(-50, 50, 32).astype(dtype)
    old = np.full(32, 9, dtype)
    want_x, want_old = x.copy(), np.zeros(32, dtype)
    unsigned = np.dtype(f"uint{bits}")
    for t in range(20):  # n = 20: threads 20..31 predicated off
        current = want_x[t % 4]
        want_old[t] = current
        a, b = (current, v[t]) if kind != "u" else (current.view(unsigned), v[t].view(unsigned))
        with np.errstate(over="ignore"):  # unsigned adds wrap around
            new = _REFERENCE[operation](a, b)
        want_x[t % 4] = np.asarray(new).astype(unsigned if kind == "u" else dtype).view(dtype)
    run_kernel(_atomic_kernel(atomic, element), [x, v, old, 20], num_blocks=1)
    assert x.tolist() == want_x.tolist() and old.tolist() == want_old.tolist()


def test_an_unpredicated_atomic_updates_in_every_thread():
    """The bare form (no mask: no predicate operand, no default 0) reads back and updates for
    every thread, one after another."""
    atomic = PredicatedAtomic("add", "u", 32, "relaxed", "cta", predicated=False)
    asm, constraints = predicated_atomic(atomic)
    assert atomic_of(asm, constraints) == atomic and "@" not in asm and constraints == "=r,l,r"
    kernel = _atomic_kernel(atomic, "i32").replace(", %p\n", "\n").replace(", i1) ->", ") ->")
    x, v, old = np.zeros(4, np.int32), np.arange(32, dtype=np.int32), np.full(32, 9, np.int32)
    run_kernel(kernel, [x, v, old, 0], num_blocks=1)  # n = 0 masks nothing here: no predicate
    assert x.tolist() == [sum(range(k, 32, 4)) for k in range(4)]
    assert old.tolist() == [sum(range(t % 4, t, 4)) for t in range(32)]


def test_only_ptx_sems_and_scopes_read_back_as_atomics():
    asm, constraints = predicated_atomic(PredicatedAtomic("add", "u", 32, "acq_rel", "gpu"))
    assert atomic_of(asm.replace("acq_rel", "seq_cst"), constraints) is None
    assert atomic_of(asm.replace(".gpu.", ".cluster."), constraints) is None
    assert atomic_of(asm, "=r,l,r") is None


@pytest.mark.parametrize("stem", ["scatter_add.sm80.w1", "atomic_old.sm90.w4"])
def test_an_atomic_is_one_predicated_atom_with_tritons_sem_and_scope(stem):
    """`tt.atomic_rmw add, acq_rel, gpu` under a mask is `@%p atom.global.gpu.acq_rel.add.u32`,
    as Triton's: no branch around it, the op's own order and scope (not `atom.acq_rel.sys`)."""
    ptx = ttgir_to_ptx((TTGIR / f"{stem}.ttgir").read_text(), chip="sm_" + stem.split(".")[1][2:])
    atoms = re.findall(r"@%p\d+ atom\.global\.gpu\.acq_rel\.add\.u32", ptx)
    assert atoms and len(atoms) == len(re.findall(r"\batom\.", ptx))
    assert "atom.global.sys" not in ptx and "atom.sys" not in ptx


def test_masks_are_scalar_predicates_and_registers_share_one_address():
    """A mask reaches each access as an i1 of its own (no `vector<R x i1>` that LLVM packs into
    integers and unpacks with shifts), and a thread's registers are one address register plus
    immediate offsets: vadd with 1 warp has 8 registers, 4 contiguous, then 4 at +128 elements."""
    text = (TTGIR / "vadd.sm80.w1.ttgir").read_text()
    lowered = str(lower_ttgir(text))
    assert "xi1>" not in lowered
    ptx = ttgir_to_ptx(text, chip="sm_80")
    assert not re.search(r"\b(selp|shl|or)\.b16\b", ptx)
    loads = re.findall(r"ld\.global\.b32 \{ %r\d+ \}, \[ (%rd\d+) \+ (\d+) \]", ptx)
    assert len(loads) == 16 and len({register for register, _ in loads}) == 2  # x and y
    assert sorted({int(offset) for _, offset in loads}) == [0, 4, 8, 12, 512, 516, 520, 524]


def _ptxas() -> Path | None:
    import triton

    path = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
    return path if path.exists() else None


def _instantiated(asm: str, constraints: str) -> str:
    """`asm` with each operand `$k` a register of its constraint's class (the predicate %p1)."""
    classes = {"c": "%rs", "h": "%rs", "r": "%r", "l": "%rd", "b": "%p", "f": "%f", "d": "%fd"}
    registers = [
        "%p1" if code.lstrip("=") == "b" else f"{classes[code.lstrip('=')]}{k + 2}"
        for k, code in enumerate(constraints.split(","))
    ]
    return re.sub(r"\$(\d+)", lambda match: registers[int(match.group(1))], asm)


#: Every predicated atomic `patterns/atomics.ptx_atomic` can give, each order and scope.
_EVERY_ATOMIC = [
    PredicatedAtomic(operation, kind, bits, sem, scope, predicated)
    for operation, kinds in {
        "add": "uf", "max": "su", "min": "su", "and": "b", "or": "b", "xor": "b", "exch": "b"
    }.items()
    for kind in kinds
    for bits in (32, 64)
    for sem in ("relaxed", "acquire", "release", "acq_rel")
    for scope in ("cta", "gpu", "sys")
    for predicated in (True, False)
]


def test_ptxas_accepts_every_predicated_access():
    """Triton's own ptxas assembles each string of the closed sets (all in one sm_80 kernel): the
    accesses, the `mad.wide.s32` address steps and the atomics."""
    ptxas = _ptxas()
    if ptxas is None:
        pytest.skip("Triton's bundled ptxas is not installed")
    forms = [*PREDICATED_ACCESSES, predicated_load(4, 32, True, 16), predicated_store(2, 64, 4096), *MAD_WIDES]
    forms += [predicated_atomic(atomic) for atomic in _EVERY_ATOMIC]
    body = "\n".join(_instantiated(asm, constraints) for asm, constraints in forms)
    ptx = f"""
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 a)
{{
    .reg .pred %p<2>;
    .reg .b16 %rs<16>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<16>;
    .reg .f64 %fd<16>;
    ld.param.u64 %rd1, [a];
    setp.ne.u64 %p1, %rd1, 0;
{body}
    ret;
}}
"""
    result = subprocess.run(
        [str(ptxas), "-arch=sm_80", "-", "-o", os.devnull], input=ptx, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
