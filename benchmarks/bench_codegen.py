"""Code-quality race against Triton 3.9 on layout conversions, in one process.

A fixed suite of conversion kernels (global load in layout A -> convert_layout -> global store in
layout B) is compiled two ways:

- **Triton 3.9**: the kernel written by hand as TTGIR and compiled with
  `triton.compile(path, target=GPUTarget("cuda", 90, 32))` (and sm_80) on the CPU;
- **ours**: `ll-lower`, then the stock `gpu-lower-to-nvvm-pipeline{cubin-chip=sm_90
  cubin-features=+ptx80 cubin-format=isa}` (and sm_80).

Per kernel it prints side by side (ours | Triton): shared bytes, `st.shared`/`ld.shared` counts
and widest vector (bits), `bar.sync`, shuffles, integer ALU instructions, total PTX instructions
(sm_90, and sm_80 totals), and our wavefronts measured by the SIMT interpreter next to the
minimum. A summary (medians, wins/losses) follows.

    python benchmarks/bench_codegen.py [--quick] [--llvm-defaults]
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from mlir import ir  # noqa: E402

from linear_layout.encodings import (BlockedLayout, DotOperandLayout, NVMMADistributedLayout,  # noqa: E402
                                     SliceLayout)
from linear_layout.ir import load_dialects  # noqa: E402
from linear_layout.passes import build_pass_manager  # noqa: E402
from linear_layout.simt import run_kernel  # noqa: E402
from linear_layout.planning.in_warp import plan_conversion  # noqa: E402
from linear_layout.patterns.to_simt import pad_to_launch  # noqa: E402
from lowering_cases import kernel_text, random_input  # noqa: E402

BITS = {"f32": 32, "f16": 16, "i8": 8}


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


def suite():
    cases = []
    # blocked <-> blocked transposes
    for shape, dtype, w in [((32, 32), "f32", 4), ((64, 64), "f32", 4), ((128, 128), "f32", 8), ((256, 128), "f32", 8),
                            ((64, 64), "f16", 4), ((128, 128), "f16", 8), ((256, 128), "f16", 8),
                            ((64, 64), "i8", 4), ((128, 128), "i8", 8), ((256, 128), "i8", 8)]:
        vec = 16 * 8 // BITS[dtype] // 4
        row = B([1, vec], [8, 4], [w, 1], [1, 0])
        col = B([vec, 1], [4, 8], [1, w], [0, 1])
        cases.append((f"transpose {shape[0]}x{shape[1]} {dtype} w{w}", row, col, shape, dtype, w))
    # blocked <-> mma
    for shape, dtype, w in [((64, 64), "f32", 4), ((128, 128), "f16", 4), ((128, 128), "f16", 8), ((256, 128), "f32", 8),
                            ((64, 64), "i8", 4)]:
        blocked = B([1, 4], [4, 8], [w, 1], [1, 0])
        mma = MMA([2, w // 2])
        cases.append((f"mma->blocked {shape[0]}x{shape[1]} {dtype} w{w}", mma, blocked, shape, dtype, w))
    for shape, dtype, w in [((64, 64), "f16", 4), ((128, 128), "f32", 8), ((128, 64), "i8", 4)]:
        blocked = B([1, 8], [8, 4], [w, 1], [1, 0])
        mma = MMA([w // 2, 2])
        cases.append((f"blocked->mma {shape[0]}x{shape[1]} {dtype} w{w}", blocked, mma, shape, dtype, w))
    # mma -> dot_op
    for shape, dtype, w, op in [((64, 64), "f16", 4, 0), ((128, 128), "f16", 8, 0), ((128, 64), "f16", 4, 1),
                                ((64, 64), "f32", 4, 0), ((128, 128), "i8", 8, 0), ((64, 128), "i8", 4, 1)]:
        mma = MMA([w // 2, 2] if op == 0 else [2, w // 2])
        k_width = {"f32": 1, "f16": 2, "i8": 4}[dtype]
        cases.append((f"mma->dot{op} {shape[0]}x{shape[1]} {dtype} w{w}", mma, DotOperandLayout(op, mma, k_width),
                      shape, dtype, w))
    # slices (1-D)
    for n, dtype, w in [(128, "f32", 4), (256, "f16", 4), (512, "f32", 8), (1024, "i8", 8)]:
        parent_a = B([1, 4], [4, 8], [w, 1], [1, 0])
        parent_b = B([4, 1], [8, 4], [1, w], [0, 1])
        cases.append((f"slice {n} {dtype} w{w}", SliceLayout(1, parent_a), SliceLayout(0, parent_b), (n,), dtype, w))
    # broadcast on either side (tensor smaller than the layout's tile)
    for shape, dtype, w, src_small in [((32, 32), "f32", 8, True), ((32, 32), "f16", 8, False),
                                       ((32, 64), "i8", 8, True), ((32, 32), "f32", 4, False)]:
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
        off, t = f"%{prefix}r", f"tensor<{n}xi32, {enc}>"
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
        except Exception as error:  # noqa: BLE001 - report and go on
            return f"error: {str(error).splitlines()[0][:80]}"
        return compiled.asm["ptx"], compiled.metadata.shared


# ---------------------------------------------------------------------------- ours


def our_compile(text: str, chip: str):
    import mlir

    context = ir.Context()
    load_dialects(context)
    with context:
        module = ir.Module.parse(text)
        build_pass_manager("ll-lower", context).run(module.operation)
        lowered = str(module)
    mlir_opt = Path(list(mlir.__path__)[0]) / "bin" / "mlir-opt"
    result = subprocess.run([str(mlir_opt), *LLVM_FLAGS, f"--pass-pipeline={nvvm(chip)}"], input=lowered,
                            capture_output=True, text=True, check=True)
    match = re.search(r'assembly = "(.*?)"', result.stdout, re.S)
    ptx = re.sub(r"\\([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), match.group(1))
    shared = sum(int(n) for n in re.findall(r"\.shared \.align \d+ \.b8 \w+\[(\d+)\]", ptx))
    return ptx, shared, lowered


def measure(lowered: str, shape, dtype: str):
    context = ir.Context()
    load_dialects(context)
    with context:
        module = ir.Module.parse(lowered)
        x = random_input(list(shape), dtype)
        y = np.zeros_like(x)
        report = run_kernel(module, [x, y])
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), "wrong result"
    return report.wavefronts, report.ideal_wavefronts


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
        # stmatrix / ldmatrix (Triton's f16 paths) count as 128-bit shared accesses
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


def main(argv=None) -> int:
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    argv = sys.argv[1:] if argv is None else argv
    if "--llvm-defaults" in argv:
        LLVM_FLAGS.clear()
    cases = suite()
    if "--quick" in argv:
        cases = cases[::4]
    print(f"Conversion kernels: ours (ll-lower + stock NVVM pipeline, LLVM flags: {' '.join(LLVM_FLAGS) or 'defaults'})"
          f" | Triton 3.9, sm_90 unless noted; {len(cases)} kernels")
    head = (f"{'kernel':<34}{'strategy':<9}{'smem B':>14}{'st.shared n/bits':>19}{'ld.shared n/bits':>19}"
            f"{'bar':>8}{'shfl':>8}{'int ALU':>11}{'total':>11}{'total sm80':>12}{'wavefronts/min':>16}")
    print(head)
    rows = []
    for name, a, b, shape, dtype, w in cases:
        src, dst = a.to_linear_layout(list(shape)), b.to_linear_layout(list(shape))
        ours_text = kernel_text(src, dst, dtype, w, encodings=(str(a), str(b)))
        ptx, smem, lowered = our_compile(ours_text, "sm_90")
        ptx80, _, _ = our_compile(ours_text, "sm_80")
        o, o80 = stats(ptx), stats(ptx80)
        wave, ideal = measure(lowered, shape, dtype)
        plan = plan_conversion(_pad(src, w), _pad(dst, w), BITS[dtype])
        tt = triton_compile(triton_kernel(a, b, shape, dtype, w), 90)
        tt80 = triton_compile(triton_kernel(a, b, shape, dtype, w), 80)
        t = stats(tt[0]) if isinstance(tt, tuple) else None
        t80 = stats(tt80[0]) if isinstance(tt80, tuple) else None
        tsmem = tt[1] if isinstance(tt, tuple) else None

        def cell(ours, theirs, width):
            return f"{ours} | {theirs if theirs is not None else '-'}".rjust(width)

        def nw(s, k):
            return None if s is None else "%d/%d" % (s[k], s[k + "_w"])

        print(f"{name:<34}{plan.kind:<9}{cell(smem, tsmem, 14)}"
              + cell(nw(o, "st"), nw(t, "st"), 19) + cell(nw(o, "ld"), nw(t, "ld"), 19)
              + cell(o["bar"], t and t["bar"], 8) + cell(o["shfl"], t and t["shfl"], 8)
              + cell(o["alu"], t and t["alu"], 11) + cell(o["total"], t and t["total"], 11)
              + cell(o80["total"], t80 and t80["total"], 12) + ("%d/%d" % (wave, ideal)).rjust(16))
        if not isinstance(tt, tuple):
            print(f"    Triton: {tt}")
        rows.append(dict(name=name, smem=smem, tsmem=tsmem, o=o, t=t, o80=o80, t80=t80, wave=wave, ideal=ideal,
                         excess=plan.strategy.bank_conflicts))
    summary(rows)
    return 0


def _pad(layout, num_warps):
    """The layout as ll-to-simt sees it: lanes/warps padded with broadcast bases to the launch."""
    return pad_to_launch(layout, 32, num_warps)


def summary(rows) -> None:
    both = [r for r in rows if r["t"] is not None]
    print()
    print(f"Summary over {len(both)} kernels that both compilers built ({len(rows)} in all):")
    for key, label in (("total", "total PTX instructions (sm_90)"), ("alu", "integer ALU"), ("bar", "bar.sync"),
                       ("st", "st.shared"), ("ld", "ld.shared")):
        ours = [r["o"][key] for r in both]
        theirs = [r["t"][key] for r in both]
        wins = sum(a < b for a, b in zip(ours, theirs))
        losses = sum(a > b for a, b in zip(ours, theirs))
        print(f"  {label:<32} median ours {statistics.median(ours):>7} | Triton {statistics.median(theirs):>7}; "
              f"ours fewer on {wins}, more on {losses}, equal on {len(both) - wins - losses}")
    ours80 = [r["o80"]["total"] for r in both if r["t80"]]
    theirs80 = [r["t80"]["total"] for r in both if r["t80"]]
    if ours80:
        print(f"  {'total PTX instructions (sm_80)':<32} median ours {statistics.median(ours80):>7} | Triton "
              f"{statistics.median(theirs80):>7}")
    smem_losses = [r["name"] for r in both if r["smem"] > (r["tsmem"] or 0)]
    print(f"  shared bytes: ours <= Triton on {len(both) - len(smem_losses)}/{len(both)}"
          + (f"; more on: {', '.join(smem_losses)}" if smem_losses else ""))
    excess = [r["name"] for r in rows if r["wave"] != r["ideal"]]
    print(f"  measured wavefronts = minimum on {len(rows) - len(excess)}/{len(rows)}"
          + (f"; excess on: {', '.join(excess)}" if excess else ""))
    total_losses = [f"{r['name']} ({r['o']['total']} vs {r['t']['total']})" for r in both if r["o"]["total"] > r["t"]["total"]]
    print("  Triton has fewer total instructions on: " + (", ".join(total_losses) if total_losses else "none"))


if __name__ == "__main__":
    sys.exit(main())
