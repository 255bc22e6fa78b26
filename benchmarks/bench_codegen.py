"""Code-quality race against Triton 3.9 on layout conversions, in one process.

A fixed suite of conversion kernels (global load in layout A -> convert_layout -> global store in
layout B) is compiled two ways:

- **Triton 3.9**: the kernel written by hand as TTGIR and compiled with
  `triton.compile(path, target=GPUTarget("cuda", 90, 32))` (and sm_80) on the CPU;
- **ours**: `ll-lower{chip=sm_90}` (`ll-lower` when the lowering has no chip option), then the
  stock `gpu-lower-to-nvvm-pipeline{cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa}`
  (and sm_80 with `chip=sm_80`).

Per kernel it prints side by side (ours | Triton): shared bytes, shared-memory instructions
(`ld/st.shared` + `ldmatrix` + `stmatrix`, with the matrix ones in brackets), `bar.sync`,
shuffles, total PTX instructions (sm_90, and sm_80), our wavefronts measured by the SIMT
interpreter against the bandwidth floor (`ceil(stored bytes/128) + ceil(loaded bytes/128)`,
measured too) and the per-access minimum, and the ldmatrix/stmatrix plan of
`planning/matrix.py` for sm_90 (instructions, predicted wavefronts = floor) where one exists.
A summary (medians, wins/losses, kernels above the floor and why) follows.

The suite: matmul epilogues (`nvidia_mma` v2 and v3 -> blocked; f16, bf16, f32, i8), 16- and
8-bit transposes at several sizes and warp counts, blocked <-> mma, mma -> dot operand, dot
operand <-> blocked (both opIdx, several kWidth, warps and registers repeating data), slices
and broadcasts.

    python benchmarks/bench_codegen.py [--quick] [--only SUBSTRING] [--llvm-defaults] [--portable]
    python benchmarks/bench_codegen.py --planning [--repeat N]

`--planning` times the planner alone instead (no compilation): `plan_conversion(..., chip="sm_90")`
over the suite, cold (the first call in this process, every cache empty) and warm (the same calls
again, served by the plan cache), then `planning/matrix.py`'s `plan_matrix_conversion` alone on
the suite's shared-memory conversions, cold (its cache cleared before each of `--repeat` rounds;
the best round is printed) and warm, with the three slowest kernels.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from mlir import ir

from linear_layout.encodings import BlockedLayout, DotOperandLayout, NVMMADistributedLayout, SliceLayout
from linear_layout.ir import load_dialects
from linear_layout.passes import build_pass_manager
from linear_layout.planning import matrix as matrix_planning
from linear_layout.planning import plan_conversion, triton_scratch_bytes
from linear_layout.planning.floor import floor_of
from linear_layout.planning.matrix import plan_matrix_conversion
from linear_layout.simt import run_kernel
from lowering_cases import kernel_text, random_input

BITS = {"f32": 32, "f16": 16, "bf16": 16, "i8": 8}
ELEMENT_BYTES = {k: v // 8 for k, v in BITS.items()}


# Triton's NVPTX backend runs with LLVM's `nvptx-mad-wide-opt` on (`mad.wide` for address
# arithmetic); LLVM's default is off. Ours is compiled with the same flag; `--llvm-defaults`
# drops it.
LLVM_FLAGS = ["--nvptx-mad-wide-opt"]


def nvvm(chip: str) -> str:
    return f"builtin.module(gpu-lower-to-nvvm-pipeline{{cubin-chip={chip} cubin-features=+ptx80 cubin-format=isa}})"


# ---------------------------------------------------------------------------- the suite


def B(spt, tpw, wpc, order):
    return BlockedLayout(tuple(spt), tuple(tpw), tuple(wpc), tuple(order))


def MMA(wpc):
    return NVMMADistributedLayout((2, 0), tuple(wpc), (16, 8))


def MMA3(wpc, n):
    return NVMMADistributedLayout((3, 0), tuple(wpc), (16, n, 16))


def _store_layout(dtype: str, warps: int, lanes_along_rows: int = 4) -> BlockedLayout:
    """The epilogue's global-store layout: 16 bytes per thread along the row."""
    vec = 16 // ELEMENT_BYTES[dtype]
    return B([1, vec], [lanes_along_rows, 32 // lanes_along_rows], [warps, 1], [1, 0])


def epilogues():
    cases = []
    # Hopper: nvidia_mma v3 -> blocked (the example first)
    for shape, dtype, wpc, n, dst in [
        ((128, 128), "f16", (4, 1), 128, B([1, 1], [1, 32], [1, 4], [1, 0])),
        ((128, 128), "bf16", (4, 1), 128, None), ((128, 128), "f32", (4, 1), 128, None),
        ((128, 128), "i8", (4, 1), 128, None), ((64, 64), "f16", (4, 1), 64, None),
        ((128, 64), "bf16", (4, 1), 64, None), ((128, 128), "f16", (8, 1), 128, None),
        ((128, 256), "f16", (8, 1), 256, B([1, 1], [1, 32], [1, 8], [1, 0])), ((128, 128), "i8", (8, 1), 128, None),
        ((128, 128), "f32", (4, 2), 64, None),
    ]:
        w = wpc[0] * wpc[1]
        cases.append((f"epilogue v3 {shape[0]}x{shape[1]} {dtype} w{w}", MMA3(wpc, n), dst or _store_layout(dtype, w),
                      shape, dtype, w))
    # Ampere: nvidia_mma v2 -> blocked
    for shape, dtype, wpc in [((64, 64), "f16", (2, 2)), ((64, 64), "bf16", (2, 2)), ((64, 64), "f32", (2, 2)),
                              ((64, 64), "i8", (2, 2)), ((128, 128), "f16", (4, 2)), ((128, 128), "bf16", (4, 2)),
                              ((128, 128), "f32", (4, 2)), ((128, 128), "i8", (4, 2))]:
        w = wpc[0] * wpc[1]
        cases.append((f"epilogue v2 {shape[0]}x{shape[1]} {dtype} w{w}", MMA(wpc), _store_layout(dtype, w),
                      shape, dtype, w))
    return cases


def transposes():
    cases = []
    for shape, dtype, w in [((32, 32), "f32", 4), ((64, 64), "f32", 4), ((128, 128), "f32", 8), ((256, 128), "f32", 8),
                            ((32, 32), "f16", 1), ((64, 64), "f16", 4), ((64, 64), "bf16", 2), ((128, 128), "f16", 4),
                            ((128, 128), "f16", 8), ((256, 128), "f16", 8), ((64, 128), "bf16", 4),
                            ((32, 64), "i8", 1), ((64, 64), "i8", 4), ((128, 128), "i8", 8), ((256, 128), "i8", 8),
                            ((64, 128), "i8", 2)]:
        vec = 16 // ELEMENT_BYTES[dtype] // 4 if dtype == "f32" else 4
        row = B([1, vec], [4, 8], [w, 1], [1, 0]) if dtype != "f32" else B([1, vec], [8, 4], [w, 1], [1, 0])
        col = B([vec, 1], [8, 4], [1, w], [0, 1]) if dtype != "f32" else B([vec, 1], [4, 8], [1, w], [0, 1])
        cases.append((f"transpose {shape[0]}x{shape[1]} {dtype} w{w}", row, col, shape, dtype, w))
    return cases


def suite():
    cases = epilogues() + transposes()
    # blocked <-> mma
    for shape, dtype, w in [((64, 64), "f32", 4), ((128, 128), "f16", 8), ((64, 64), "i8", 4)]:
        cases.append((f"mma->blocked {shape[0]}x{shape[1]} {dtype} w{w}", MMA([2, w // 2]),
                      B([1, 4], [4, 8], [w, 1], [1, 0]), shape, dtype, w))
    for shape, dtype, w in [((64, 64), "f16", 4), ((128, 128), "f32", 8), ((128, 64), "i8", 4)]:
        cases.append((f"blocked->mma {shape[0]}x{shape[1]} {dtype} w{w}", B([1, 8], [8, 4], [w, 1], [1, 0]),
                      MMA([w // 2, 2]), shape, dtype, w))
    # mma -> dot_op
    for shape, dtype, w, op in [((64, 64), "f16", 4, 0), ((128, 128), "f16", 8, 0), ((128, 64), "f16", 4, 1),
                                ((64, 64), "f32", 4, 0), ((128, 128), "i8", 8, 0), ((64, 128), "i8", 4, 1)]:
        mma = MMA([w // 2, 2] if op == 0 else [2, w // 2])
        k_width = {"f32": 1, "f16": 2, "i8": 4}[dtype]
        cases.append((f"mma->dot{op} {shape[0]}x{shape[1]} {dtype} w{w}", mma, DotOperandLayout(op, mma, k_width),
                      shape, dtype, w))
    # dot operand -> blocked and blocked -> dot operand (both opIdx, f16 and i8, several kWidth):
    # the dot operand repeats data across the warps along its non-K dimension (and, in a tile
    # of 8 or 16 rows, in registers); Triton uses stmatrix/ldmatrix for each of these (issue 20)
    # (names: dotOPIDX(mma warpsPerCTA, kWidth); 4 warps)
    row, col = B([1, 8], [8, 4], [4, 1], [1, 0]), B([8, 1], [4, 8], [1, 4], [0, 1])
    for op, wpc, dtype, k_width, shape, other, to_dot in [
        (1, (2, 2), "f16", 2, (64, 64), row, False), (0, (2, 2), "f16", 2, (64, 64), row, False),
        (1, (4, 1), "f16", 2, (64, 64), row, False), (0, (1, 4), "f16", 2, (64, 64), row, False),
        (1, (2, 2), "f16", 8, (64, 64), row, False), (1, (4, 1), "i8", 4, (64, 64), row, False),
        (0, (2, 2), "f16", 2, (8, 64), row, True), (1, (4, 1), "f16", 2, (8, 64), row, True),
        (1, (4, 1), "f16", 8, (16, 64), row, True), (0, (1, 4), "i8", 4, (64, 64), col, True),
        (1, (2, 2), "f16", 2, (64, 64), col, True),
    ]:
        dot = DotOperandLayout(op, MMA(list(wpc)), k_width)
        a, b = (other, dot) if to_dot else (dot, other)
        kind = "blocked" if other is row else "blocked^T"
        operand = f"dot{op}({wpc[0]}x{wpc[1]},k{k_width})"  # the mma's warpsPerCTA, kWidth
        label = f"{kind}->{operand}" if to_dot else f"{operand}->{kind}"
        cases.append((f"{label} {shape[0]}x{shape[1]} {dtype}", a, b, shape, dtype, 4))
    # slices (1-D)
    for n, dtype, w in [(128, "f32", 4), (256, "f16", 4), (512, "f32", 8), (1024, "i8", 8)]:
        parent_a = B([1, 4], [4, 8], [w, 1], [1, 0])
        parent_b = B([4, 1], [8, 4], [1, w], [0, 1])
        cases.append((f"slice {n} {dtype} w{w}", SliceLayout(1, parent_a), SliceLayout(0, parent_b), (n,), dtype, w))
    # broadcast on either side (tensor smaller than the layout's tile)
    for shape, dtype, w, src_small in [((32, 32), "f32", 8, True), ((32, 32), "f16", 8, False),
                                       ((32, 64), "i8", 8, True), ((32, 32), "f32", 4, False),
                                       ((8, 64), "f16", 4, False)]:
        big = B([1, 4], [2, 16], [w, 1], [1, 0])  # covers (2w)x64
        other = B([4, 1], [8, 4], [1, w], [0, 1])
        a, b = (big, other) if src_small else (other, big)
        cases.append((f"broadcast-{'src' if src_small else 'dst'} {shape[0]}x{shape[1]} {dtype} w{w}", a, b, shape,
                      dtype, w))
    return cases


# ---------------------------------------------------------------------------- Triton's kernel


def _index_tensor(shape, enc: str, ptr: str, dtype: str, prefix: str) -> tuple[list[str], str]:
    """TTGIR lines computing the pointer tensor of a row-major `shape` tile in encoding `enc`."""
    lines = []
    if len(shape) == 1:
        n = shape[0]
        lines.append(f"%{prefix}r = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32, {enc}>")
        off = f"%{prefix}r"
        dims = f"{n}"
    else:
        m, n = shape
        s1, s0 = f"#ttg.slice<{{dim = 1, parent = {enc}}}>", f"#ttg.slice<{{dim = 0, parent = {enc}}}>"
        lines += [
            f"%{prefix}r0 = tt.make_range {{end = {m} : i32, start = 0 : i32}} : tensor<{m}xi32, {s1}>",
            f"%{prefix}e0 = tt.expand_dims %{prefix}r0 {{axis = 1 : i32}} : tensor<{m}xi32, {s1}> -> tensor<{m}x1xi32, {enc}>",
            f"%{prefix}c = arith.constant dense<{n}> : tensor<{m}x1xi32, {enc}>",
            f"%{prefix}m0 = arith.muli %{prefix}e0, %{prefix}c : tensor<{m}x1xi32, {enc}>",
            f"%{prefix}r1 = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32, {s0}>",
            f"%{prefix}e1 = tt.expand_dims %{prefix}r1 {{axis = 0 : i32}} : tensor<{n}xi32, {s0}> -> tensor<1x{n}xi32, {enc}>",
            f"%{prefix}b0 = tt.broadcast %{prefix}m0 : tensor<{m}x1xi32, {enc}> -> tensor<{m}x{n}xi32, {enc}>",
            f"%{prefix}b1 = tt.broadcast %{prefix}e1 : tensor<1x{n}xi32, {enc}> -> tensor<{m}x{n}xi32, {enc}>",
            f"%{prefix}o = arith.addi %{prefix}b0, %{prefix}b1 : tensor<{m}x{n}xi32, {enc}>",
        ]
        off, dims = f"%{prefix}o", f"{m}x{n}"
    lines += [
        f"%{prefix}p = tt.splat {ptr} : !tt.ptr<{dtype}> -> tensor<{dims}x!tt.ptr<{dtype}>, {enc}>",
        f"%{prefix}q = tt.addptr %{prefix}p, {off} : tensor<{dims}x!tt.ptr<{dtype}>, {enc}>, tensor<{dims}xi32, {enc}>",
    ]
    return lines, f"%{prefix}q"


def triton_kernel(a, b, shape, dtype, num_warps) -> str:
    dims = "x".join(map(str, shape))
    la, qa = _index_tensor(shape, "#A", "%in", dtype, "a")
    lb, qb = _index_tensor(shape, "#B", "%out", dtype, "b")
    body = "\n    ".join(la + [f"%x = tt.load {qa} : tensor<{dims}x!tt.ptr<{dtype}>, #A>",
                                f"%y = ttg.convert_layout %x : tensor<{dims}x{dtype}, #A> -> tensor<{dims}x{dtype}, #B>"]
                           + lb + [f"tt.store {qb}, %y : tensor<{dims}x!tt.ptr<{dtype}>, #B>", "tt.return"])
    return f"""#A = {a}
#B = {b}
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = {num_warps} : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @k(%in: !tt.ptr<{dtype}> {{tt.divisibility = 16 : i32}}, %out: !tt.ptr<{dtype}> {{tt.divisibility = 16 : i32}}) attributes {{noinline = false}} {{
    {body}
  }}
}}
"""


def triton_compile(text: str, arch: int):
    """(ptx, shared bytes) or None."""
    try:
        import triton
        from triton.backends.compiler import GPUTarget
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.ttgir")
        Path(path).write_text(text.replace('ttg.target = "cuda:90"', f'ttg.target = "cuda:{arch}"'))
        try:
            compiled = triton.compile(path, target=GPUTarget("cuda", arch, 32))
        except Exception as error:  # report and go on
            return f"error: {str(error).splitlines()[0][:80]}"
        return compiled.asm["ptx"], compiled.metadata.shared


# ---------------------------------------------------------------------------- ours


def lowering_pipeline(chip: str | None) -> str:
    """`ll-lower{chip=...}`, or plain `ll-lower` when `chip` is None or the pass has no chip option."""
    if chip is None:
        return "ll-lower"
    pipeline = f"ll-lower{{chip={chip}}}"
    try:
        build_pass_manager(pipeline, ir.Context())
    except Exception:  # an older lowering without the option: portable
        return "ll-lower"
    return pipeline


def our_compile(text: str, chip: str, lowering: str):
    import mlir

    context = ir.Context()
    load_dialects(context)
    with context:
        module = ir.Module.parse(text)
        build_pass_manager(lowering, context).run(module.operation)
        lowered = str(module)
    mlir_opt = Path(next(iter(mlir.__path__))) / "bin" / "mlir-opt"
    result = subprocess.run([str(mlir_opt), *LLVM_FLAGS, f"--pass-pipeline={nvvm(chip)}"], input=lowered,
                            capture_output=True, text=True, check=True)
    match = re.search(r'assembly = "(.*?)"', result.stdout, re.S)
    ptx = re.sub(r"\\([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), match.group(1))
    static = sum(int(n) for n in re.findall(r"\.shared \.align \d+ \.b8 \w+\[(\d+)\]", ptx))
    return ptx, static + dynamic_shared_of(lowered), lowered


def dynamic_shared_of(lowered: str) -> int:
    """The dynamic shared bytes a lowered kernel needs (its `ll.dynamic_shared_memory`, set when its
    scratch exceeds the 48 KiB of static shared memory a CUDA module may declare; else 0)."""
    match = re.search(r"ll\.dynamic_shared_memory = (\d+)", lowered)
    return int(match.group(1)) if match else 0


def tile(shape, dtype: str, seed: int = 0) -> np.ndarray:
    """A random input tile as the interpreter takes it (bf16: float32 values that are bf16)."""
    if dtype != "bf16":
        return random_input(list(shape), dtype, seed)
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return (values.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)


def measure(lowered: str, shape, dtype: str):
    """The interpreter's (wavefronts, floor, per-access minimum) of our kernel; the output is checked."""
    context = ir.Context()
    load_dialects(context)
    with context:
        module = ir.Module.parse(lowered)
        x = tile(shape, dtype)
        y = np.zeros_like(x)
        report = run_kernel(module, [x, y])
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), "wrong result"
    assert not report.races
    return report.wavefronts, report.floor_wavefronts, report.ideal_wavefronts


def matrix_plan(src, dst, dtype: str, chip: str = "sm_90"):
    """planning/matrix.py's plan for sm_90 within Triton's scratch (None when there is none)."""
    if BITS[dtype] not in (8, 16, 32):
        return None
    try:
        bound = triton_scratch_bytes(src, dst, BITS[dtype])
    except (ValueError, AssertionError):
        bound = None
    return plan_matrix_conversion(src, dst, BITS[dtype], chip, max_scratch_bytes=bound)


# ---------------------------------------------------------------------------- PTX statistics

INT_ALU = re.compile(r"^(and|or|xor|not|shl|shr|add|sub|mul|mad|lop3|bfe|bfi|prmt|shf|min|max|neg|abs|cvt\.u32|"
                     r"cvt\.s32|cvt\.u64|cvt\.s64|rem|div)\b")


def stats(ptx: str) -> dict:
    body = ptx[ptx.index("{", ptx.index(".entry")):]
    ins = []
    for line in body.splitlines():
        line = line.strip()
        if not line.endswith(";") or line.startswith((".reg", "//", "{", "}", ".shared", ".loc")) or line.startswith("$"):
            continue
        op = line.split()[0]
        if op.startswith("@"):
            op = line.split()[1]
        ins.append(op)

    def width(prefix):
        widths = [0]
        for i in ins:
            if i.startswith(prefix):
                parts = i.split(".")
                lanes = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d", p)), 1)
                bits = next((int(p[1:]) for p in reversed(parts) if re.fullmatch(r"[bfsu]\d+", p)), 32)
                widths.append(lanes * bits)
        return max(widths)

    return {
        # stmatrix / ldmatrix count as 128-bit shared accesses; "mat" counts them alone
        "shared": sum(i.startswith(("st.shared", "stmatrix", "ld.shared", "ldmatrix")) for i in ins),
        "mat": sum(i.startswith(("stmatrix", "ldmatrix")) for i in ins),
        "st": sum(i.startswith(("st.shared", "stmatrix")) for i in ins),
        "st_w": max(width("st.shared"), 128 if any(i.startswith("stmatrix") for i in ins) else 0),
        "ld": sum(i.startswith(("ld.shared", "ldmatrix")) for i in ins),
        "ld_w": max(width("ld.shared"), 128 if any(i.startswith("ldmatrix") for i in ins) else 0),
        "bar": sum(i.startswith(("bar.sync", "barrier.sync")) for i in ins),
        "shfl": sum(i.startswith("shfl") for i in ins),
        "alu": sum(1 for i in ins if INT_ALU.match(i)),
        "total": len(ins),
    }


# ---------------------------------------------------------------------------- main


def _cell(ours, theirs, width: int) -> str:
    return f"{ours} | {theirs if theirs is not None else '-'}".rjust(width)


def _shared_cell(s) -> str | None:
    if s is None:
        return None
    return f"{s['shared']}" + (f"[{s['mat']}]" if s["mat"] else "")


def _matrix_cell(plan) -> str:
    if plan is None:
        return "-"
    m = plan.matrix
    return (f"{len(m.instructions)} {m.instruction[:2]}.x{m.num}{'.t' if m.trans else ''} + "
            f"{len(plan.other.instructions)}x{plan.other.instruction_bytes}B = {plan.wavefronts}")


def run_case(case, lowering90: str, lowering80: str) -> dict:
    name, a, b, shape, dtype, w = case
    src, dst = a.to_linear_layout(list(shape)), b.to_linear_layout(list(shape))
    text = kernel_text(src, dst, dtype, w, encodings=(str(a), str(b)))
    ptx, smem, lowered = our_compile(text, "sm_90", lowering90)
    ptx80, _, _ = our_compile(text, "sm_80", lowering80)
    wave, floor, ideal = measure(lowered, shape, dtype)
    chip = re.search(r"chip=(\w+)", lowering90)
    plan = plan_conversion(src, dst, None, BITS[dtype], chip=chip.group(1) if chip else None)  # what ran
    tt = triton_compile(triton_kernel(a, b, shape, dtype, w), 90)
    tt80 = triton_compile(triton_kernel(a, b, shape, dtype, w), 80)
    report = floor_of(plan)
    return dict(name=name, strategy=plan.strategy, smem=smem, o=stats(ptx), o80=stats(ptx80),
                tsmem=tt[1] if isinstance(tt, tuple) else None, t=stats(tt[0]) if isinstance(tt, tuple) else None,
                t80=stats(tt80[0]) if isinstance(tt80, tuple) else None, error=None if isinstance(tt, tuple) else tt,
                wave=wave, floor=floor, ideal=ideal, reasons=report.reasons,
                lane_floor=report.store.floor + report.load.lane_floor if report.load else 0,
                matrix=plan.matrix or matrix_plan(src, dst, dtype))


def print_row(r: dict) -> None:
    o, t = r["o"], r["t"]
    print(f"{r['name']:<34}{r['strategy']:<9}{_cell(r['smem'], r['tsmem'], 16)}"
          + _cell(_shared_cell(o), _shared_cell(t), 18)
          + _cell(o["bar"], t and t["bar"], 8) + _cell(o["shfl"], t and t["shfl"], 8)
          + _cell(o["total"], t and t["total"], 11) + _cell(r["o80"]["total"], r["t80"] and r["t80"]["total"], 12)
          + f"{r['wave']}/{r['floor']}/{r['ideal']}".rjust(16) + "  " + _matrix_cell(r["matrix"]))
    if r["error"]:
        print(f"    Triton: {r['error']}")


# ---------------------------------------------------------------------------- planning speed


def _timed(calls) -> list[tuple[float, str]]:
    """(seconds, name) of each `(name, call)`, in order."""
    out = []
    for name, call in calls:
        start = time.perf_counter()
        call()
        out.append((time.perf_counter() - start, name))
    return out


def _planning_line(label: str, cold: list, warm: list) -> str:
    slowest = ", ".join(f"{name} {seconds:.3f}" for seconds, name in sorted(cold)[-3:][::-1])
    return (f"  {label:<44} cold {sum(t for t, _ in cold):7.3f} s   warm {sum(t for t, _ in warm):8.4f} s   "
            f"slowest cold (s): {slowest}")


def planning_speed(cases, repeat: int) -> None:
    """Cold and warm planning times over `cases` (see the module docstring, `--planning`)."""
    layouts = [(c[0], c[1].to_linear_layout(list(c[3])), c[2].to_linear_layout(list(c[3])), BITS[c[4]]) for c in cases]
    calls = [(n, lambda s=s, d=d, b=b: plan_conversion(s, d, None, b, chip="sm_90")) for n, s, d, b in layouts]
    cold, warm = _timed(calls), _timed(calls)
    print(f"Planning speed over {len(cases)} kernels (pure Python, no compilation)")
    print(_planning_line("plan_conversion(chip=sm_90), whole planner", cold, warm))
    shared = []
    for name, src, dst, bits in layouts:
        plan = plan_conversion(src, dst, None, bits, chip="sm_90")
        if plan.strategy.uses_shared_memory:
            bound = triton_scratch_bytes(plan.src, plan.dst, bits, ldmatrix=True, stmatrix=True)
            shared.append((name, lambda p=plan, b=bits, m=bound: plan_matrix_conversion(
                p.src, p.dst, b, "sm_90", max_scratch_bytes=m)))
    rounds = []
    for _ in range(max(1, repeat)):
        matrix_planning._plan_cached.cache_clear()
        rounds.append(_timed(shared))
    best = min(rounds, key=lambda r: sum(t for t, _ in r))
    print(_planning_line(f"plan_matrix_conversion ({len(shared)} shared), best of {len(rounds)}", best, _timed(shared)))


def main(argv=None) -> int:
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    argv = sys.argv[1:] if argv is None else argv
    if "--planning" in argv:
        repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 3
        planning_speed(suite(), repeat)
        return 0
    if "--llvm-defaults" in argv:
        LLVM_FLAGS.clear()
    portable = "--portable" in argv
    lowering90 = lowering_pipeline(None if portable else "sm_90")
    lowering80 = lowering_pipeline(None if portable else "sm_80")
    cases = suite()
    if "--quick" in argv:
        cases = cases[::4]
    if "--only" in argv:  # --only SUBSTRING: the kernels whose name contains it
        cases = [c for c in cases if argv[argv.index("--only") + 1] in c[0]]
    print(f"Conversion kernels: ours ({lowering90} + stock NVVM pipeline, LLVM flags: {' '.join(LLVM_FLAGS) or 'defaults'})"
          f" | Triton 3.9, sm_90 unless noted; {len(cases)} kernels")
    print("shared instr = ld/st.shared + ldmatrix + stmatrix per thread ([n]: matrix ones); wavefronts measured / "
          "floor / per-access minimum; last column: the ldmatrix/stmatrix plan that ran, else the best sm_90 one "
          "(its wavefronts)")
    print(f"{'kernel':<34}{'strategy':<9}{'smem B':>16}{'shared instr':>18}{'bar':>8}{'shfl':>8}{'total':>11}"
          f"{'total sm80':>12}{'wave/floor/min':>16}  matrix plan (sm_90)")
    rows = []
    for case in cases:
        rows.append(run_case(case, lowering90, lowering80))
        print_row(rows[-1])
    summary(rows)
    return 0


def _losses(rows, key) -> list[str]:
    return [f"{r['name']} ({key(r['o'], r)} vs {key(r['t'], r)})" for r in rows if key(r["o"], r) > key(r["t"], r)]


def summary(rows) -> None:
    both = [r for r in rows if r["t"] is not None]
    print()
    print(f"Summary over {len(both)} kernels that both compilers built ({len(rows)} in all):")
    for key, label in (("total", "total PTX instructions (sm_90)"), ("alu", "integer ALU"), ("bar", "bar.sync"),
                       ("shared", "shared instructions")):
        ours = [r["o"][key] for r in both]
        theirs = [r["t"][key] for r in both]
        wins = sum(a < b for a, b in zip(ours, theirs))
        losses = sum(a > b for a, b in zip(ours, theirs))
        print(f"  {label:<32} median ours {statistics.median(ours):>7} | Triton {statistics.median(theirs):>7}; "
              f"ours fewer on {wins}, more on {losses}, equal on {len(both) - wins - losses}")
    matrix = [r for r in both if r["t"]["mat"]]
    at_floor = [r for r in matrix if r["wave"] == r["floor"]]
    fewer = [r for r in matrix if r["o"]["shared"] <= r["t"]["shared"]]
    planned = [r for r in matrix if r["matrix"] is not None]
    print(f"  Triton uses ldmatrix/stmatrix on {len(matrix)}: ours at the floor on {len(at_floor)}, shared "
          f"instructions <= Triton on {len(fewer)}; planning/matrix.py has a matrix plan for {len(planned)}")
    above = [r for r in rows if r["wave"] != r["floor"]]
    lane = [r for r in above if r["wave"] == r["lane_floor"]]
    print(f"  measured wavefronts = floor on {len(rows) - len(above)}/{len(rows)}; above it: {len(above)}, of which "
          f"{len(lane)} at the lane floor (lanes repeat data: no layout of the scratch can do better)")
    for r in above:
        why = "; ".join(r["reasons"]) or "not a shared-memory plan"
        plan = f" (matrix plan: {_matrix_cell(r['matrix'])})" if r["matrix"] else ""
        print(f"    {r['name']}: {r['wave']} > {r['floor']} (lane floor {r['lane_floor']}): {why}{plan}")
    smem = _losses(both, lambda s, r: r["smem"] if s is r["o"] else r["tsmem"])
    print(f"  shared bytes: ours <= Triton on {len(both) - len(smem)}/{len(both)}"
          + (f"; more on: {', '.join(smem)}" if smem else ""))
    total = _losses(both, lambda s, r: s["total"])
    print(f"  total PTX instructions: ours <= Triton on {len(both) - len(total)}/{len(both)}"
          + (f"; more on: {', '.join(total)}" if total else ""))


if __name__ == "__main__":
    from quiet import run_quietly

    run_quietly(main)
