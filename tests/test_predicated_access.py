"""Predicated global accesses (`ir/ptx_asm.py`): masked `tt.load`/`tt.store` lower to one
predicated `ld.global`/`st.global` in `llvm.inline_asm` without a branch, and the SIMT
interpreter runs exactly those strings, touching memory only on the predicated-on lanes, with
its bounds and alignment checks on them."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from linear_layout.ir.ptx_asm import (
    FORMS,
    PREDICATED_ACCESSES,
    access_of,
    asm_of,
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
    assert "scf.if" not in lowered and lowered.count("llvm.inline_asm") == 6  # 2 x 2 loads, 2 stores
    ptx = ttgir_to_ptx(text, chip="sm_80")
    assert "bra" not in ptx and ptx.count("@%p") == 6


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
    classes = {"c": "%rs", "h": "%rs", "r": "%r", "l": "%rd", "b": "%p"}
    registers = [
        "%p1" if code.lstrip("=") == "b" else f"{classes[code.lstrip('=')]}{k + 2}"
        for k, code in enumerate(constraints.split(","))
    ]
    return re.sub(r"\$(\d+)", lambda match: registers[int(match.group(1))], asm)


def test_ptxas_accepts_every_predicated_access():
    """Triton's own ptxas assembles each string of the closed set (all in one sm_80 kernel)."""
    ptxas = _ptxas()
    if ptxas is None:
        pytest.skip("Triton's bundled ptxas is not installed")
    forms = [*PREDICATED_ACCESSES, predicated_load(4, 32, True, 16), predicated_store(2, 64, 4096)]
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
