"""Lowering benchmarks, in one process.

1. Throughput of `ll-lower` (linearize, to-simt, canonicalize, cse) on modules with 100, 1,000
   and 10,000 `ttg.convert_layout` ops (warp-shuffle conversions, the most expensive in-warp
   case), in conversions per second, and the scaling ratio time(10x ops) / time(ops).
   Targets: >= 1,000 conversions/s and 10x ops <= 11x time.
2. PTX of a fixed suite of conversion kernels (load -> convert_layout -> store, sm_90), ours
   through the stock gpu-lower-to-nvvm-pipeline next to Triton 3.9 compiling the same kernel
   written as TTGIR: integer ALU instructions, shuffles, selects and all instructions, per
   kernel. Target: no more integer ALU than Triton on the register and shuffle cases.
3. The planner on a no-op conversion `plan_conversion(e, e)` of layouts with growing registers
   per thread, cold (the plan cache cleared) and warm: linear in the registers.

    python benchmarks/bench_lowering.py [--quick] [--llvm-defaults]
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mlir import ir

from linear_layout import LinearLayout
from linear_layout.encodings import DistributedLinearLayout
from linear_layout.ir import load_dialects
from linear_layout.ir.bridge import format_ll_layout
from linear_layout.passes import build_pass_manager
from linear_layout.planning import plan as plan_module
from linear_layout.planning import plan_conversion

NVVM = "builtin.module(gpu-lower-to-nvvm-pipeline{cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa})"
# Triton's NVPTX backend runs with LLVM's `nvptx-mad-wide-opt` on (it folds `mul.wide` + `add`
# of an address into one `mad.wide`); LLVM's default is off. The comparison uses the same
# code-generation flag on both sides; `--llvm-defaults` drops it.
LLVM_FLAGS = ["--nvptx-mad-wide-opt"]


def layout(reg, lane, warp, size):
    return LinearLayout.from_bases([("register", [[r] for r in reg]), ("lane", [[l] for l in lane]),
                                    ("warp", [[w] for w in warp]), ("block", [])], ["dim0"], [size])


# name -> (src, dst, num_warps): 1-D tensors so that Triton's TTGIR needs only make_range.
SUITE = {
    "register permutation": (layout([1, 2, 4], [8, 16, 32, 64, 128], [256, 512], 1024),
                             layout([4, 1, 2], [8, 16, 32, 64, 128], [256, 512], 1024), 4),
    "xor shuffle (swizzle)*": (layout([1, 2], [4, 8, 16, 32, 64], [128, 256], 512),
                               layout([1, 2 ^ 4], [4, 8, 16, 32, 64], [128, 256], 512), 4),
    "lane permutation": (layout([1, 2], [4, 8, 16, 32, 64], [128, 256], 512),
                         layout([1, 2], [8, 16, 32, 64, 4], [128, 256], 512), 4),
    "register<->lane transpose": (layout([1, 2], [4, 8, 16, 32, 64], [128, 256], 512),
                                  layout([4, 2], [1, 8, 16, 32, 64], [128, 256], 512), 4),
}


def ttg_linear(l: LinearLayout) -> str:
    bases = dict(l.bases)
    return str(DistributedLinearLayout(bases["register"], bases["lane"], bases["warp"], bases["block"],
                                       tuple(s for _, s in l.out_dims)))


def our_kernel(src, dst, num_warps, dtype="f32", count=1) -> str:
    n = src.get_out_dim_size("dim0")
    a, b = format_ll_layout(src), format_ll_layout(dst)
    body, value = [], "%x"
    for k in range(count):
        s, d = (a, b) if k % 2 == 0 else (b, a)
        body.append(f'    %c{k} = "ttg.convert_layout"({value}) : (tensor<{n}x{dtype}, {s}>) -> tensor<{n}x{dtype}, {d}>')
        value = f"%c{k}"
    last = b if count % 2 else a
    body = "\n".join(body)
    return f"""module attributes {{"ttg.num-warps" = {num_warps} : i32}} {{
  func.func @k(%in: memref<{n}x{dtype}>, %out: memref<{n}x{dtype}>) {{
    %x = "ll.load"(%in) : (memref<{n}x{dtype}>) -> tensor<{n}x{dtype}, {a}>
{body}
    "ll.store"({value}, %out) : (tensor<{n}x{dtype}, {last}>, memref<{n}x{dtype}>) -> ()
    return
  }}
}}"""


def triton_kernel(src, dst, num_warps) -> str:
    n = src.get_out_dim_size("dim0")
    a, b = ttg_linear(src), ttg_linear(dst)
    return f"""#A = {a}
#B = {b}
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = {num_warps} : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @k(%in: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}, %out: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}) attributes {{noinline = false}} {{
    %ra = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32, #A>
    %pa = tt.splat %in : !tt.ptr<f32> -> tensor<{n}x!tt.ptr<f32>, #A>
    %qa = tt.addptr %pa, %ra : tensor<{n}x!tt.ptr<f32>, #A>, tensor<{n}xi32, #A>
    %x = tt.load %qa : tensor<{n}x!tt.ptr<f32>, #A>
    %y = ttg.convert_layout %x : tensor<{n}xf32, #A> -> tensor<{n}xf32, #B>
    %rb = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32, #B>
    %pb = tt.splat %out : !tt.ptr<f32> -> tensor<{n}x!tt.ptr<f32>, #B>
    %qb = tt.addptr %pb, %rb : tensor<{n}x!tt.ptr<f32>, #B>, tensor<{n}xi32, #B>
    tt.store %qb, %y : tensor<{n}x!tt.ptr<f32>, #B>
    tt.return
  }}
}}
"""


def lower(text: str) -> str:
    context = ir.Context()
    load_dialects(context)
    with context:
        module = ir.Module.parse(text)
        build_pass_manager("ll-lower", context).run(module.operation)
        return str(module)


def our_ptx(text: str) -> str:
    import mlir

    mlir_opt = Path(list(mlir.__path__)[0]) / "bin" / "mlir-opt"
    result = subprocess.run([str(mlir_opt), *LLVM_FLAGS, f"--pass-pipeline={NVVM}"], input=lower(text),
                            capture_output=True, text=True, check=True)
    match = re.search(r'assembly = "(.*?)"', result.stdout, re.S)
    return re.sub(r"\\([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), match.group(1))


def triton_ptx(text: str) -> str | None:
    try:
        import triton
        from triton.backends.compiler import GPUTarget
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.ttgir")
        Path(path).write_text(text)
        try:
            return triton.compile(path, target=GPUTarget("cuda", 90, 32)).asm["ptx"]
        except Exception:  # e.g. a swizzled layout that Triton's #ttg.linear cannot express
            return None


INT_ALU = re.compile(r"^(and|or|xor|not|shl|shr|add|sub|mul|mad|lop3|bfe|bfi|prmt|shf|min|max|neg|abs|cvt\.u32|cvt\.s32|cvt\.u64|cvt\.s64|mov\.u32|rem|div)\b")


def count(ptx: str) -> dict[str, int]:
    body = ptx[ptx.index("{", ptx.index(".entry")):]
    instructions = [line.strip().split()[0] for line in body.splitlines()
                    if line.strip().endswith(";") and not line.strip().startswith((".reg", "//", "ret", "{", "}"))
                    and not line.strip().startswith("$")]
    instructions = [i.lstrip("@%p0123456789! ") or i for i in instructions]
    return {
        "int ALU": sum(1 for i in instructions if INT_ALU.match(i) and not i.startswith("mov.u32")),
        "shuffles": sum(1 for i in instructions if i.startswith("shfl")),
        "selects": sum(1 for i in instructions if i.startswith("selp")),
        "total": len(instructions),
    }


def many_kernels(src, dst, warps, conversions: int, per_kernel: int) -> str:
    """A module of `conversions // per_kernel` kernels, each a chain of `per_kernel` conversions."""
    kernels = []
    for k in range(max(1, conversions // per_kernel)):
        lines = our_kernel(src, dst, warps, count=min(conversions, per_kernel)).splitlines()
        function = "\n".join(lines[1:-1])  # drop the module's first and last lines
        kernels.append(function.replace("func.func @k(", f"func.func @k{k}("))
    return f'module attributes {{"ttg.num-warps" = {warps} : i32}} {{\n' + "\n".join(kernels) + "\n}"


def throughput(sizes, repeats: int = 3, per_kernel: int = 100) -> None:
    """Lowering time for modules of growing size.

    The target is measured on modules of kernels with `per_kernel` conversions each (real kernels
    hold a handful). A single kernel with all conversions in one block is reported too: there the
    upstream canonicalize and cse dominate and grow faster than linearly with the block size.
    """
    src, dst, warps = SUITE["register<->lane transpose"]
    for label, build in (
        (f"kernels of {per_kernel} conversions", lambda n: many_kernels(src, dst, warps, n, per_kernel)),
        ("one kernel (stress)", lambda n: our_kernel(src, dst, warps, count=n)),
    ):
        print(f"ll-lower throughput, {label} (warp-shuffle case; best of {repeats})")
        times = {}
        for n in sizes:
            text = build(n)
            best = cpu = float("inf")
            for _ in range(repeats):
                start, start_cpu = time.perf_counter(), time.process_time()
                lower(text)
                best = min(best, time.perf_counter() - start)
                cpu = min(cpu, time.process_time() - start_cpu)
            times[n] = best
            print(f"  {n:>6} conversions: {times[n]:8.3f} s  {n / times[n]:10.0f} conversions/s  (CPU {cpu:.3f} s)")
        ordered = sorted(times)
        for small, big in zip(ordered, ordered[1:]):
            print(f"  scaling {small} -> {big}: {times[big] / times[small]:.2f}x time for {big // small}x ops")


def ptx_table() -> None:
    print()
    print("PTX per kernel (load -> convert_layout -> store, 1-D f32, sm_90): ours / Triton 3.9"
          f"; our LLVM flags: {' '.join(LLVM_FLAGS) or 'defaults'}")
    header = f"  {'conversion':<28}{'strategy':<10}" + "".join(f"{k:>16}" for k in ("int ALU", "shuffles", "selects", "total"))
    print(header)
    for name, (src, dst, warps) in SUITE.items():
        ours = count(our_ptx(our_kernel(src, dst, warps)))
        # A starred kernel needs #ttg.generic_linear, which Triton 3.9 does not parse (its
        # compiler aborts on it, so it is not attempted).
        theirs_ptx = None if name.endswith("*") else triton_ptx(triton_kernel(src, dst, warps))
        theirs = count(theirs_ptx) if theirs_ptx else None
        kind = plan_conversion(src, dst).strategy
        cells = "".join(f"{ours[k]:>9} / {theirs[k] if theirs else '-':<5}" for k in ("int ALU", "shuffles", "selects", "total"))
        print(f"  {name:<28}{kind:<10}{cells}")
    print("  * not expressible as Triton's #ttg.linear (it requires a permutation matrix): ours only")


def noop_planning(registers=(8, 32, 128, 512)) -> None:
    """`plan_conversion(e, e)` where `e` holds `r` registers per thread (32 lanes, 4 warps)."""
    print()
    print("plan_conversion(e, e), a no-op, by registers per thread: cold (plan cache cleared; best of 3) / warm, CPU time")
    times = {}
    for r in registers:
        bits = r.bit_length() - 1
        e = layout([1 << i for i in range(bits)], [1 << (bits + i) for i in range(5)],
                   [1 << (bits + 5), 1 << (bits + 6)], 1 << (bits + 7))
        cold = float("inf")
        for _ in range(3):  # best of 3, each on an empty plan cache
            plan_module._plan.cache_clear()
            start = time.process_time()
            strategy = plan_conversion(e, e).strategy
            cold = min(cold, time.process_time() - start)
        start = time.process_time()
        plan_conversion(e, e)
        warm = time.process_time() - start
        times[r] = cold
        print(f"  {r:>5} registers: {cold * 1e3:9.2f} ms cold {warm * 1e6:9.1f} us warm  ({strategy})")
    ordered = sorted(times)
    for small, big in zip(ordered, ordered[1:]):
        print(f"  scaling {small} -> {big}: {times[big] / times[small]:.2f}x time for {big // small}x registers")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--llvm-defaults" in argv:
        LLVM_FLAGS.clear()
    throughput([100, 1000] if "--quick" in argv else [100, 1000, 10000], repeats=1 if "--quick" in argv else 3)
    ptx_table()
    noop_planning()
    return 0


if __name__ == "__main__":
    from quiet import run_quietly

    run_quietly(main)
