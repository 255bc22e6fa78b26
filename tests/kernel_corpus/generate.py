"""Write the kernel corpus's TTGIR: each kernel of `corpus.py` compiled by Triton 3.9.

    python tests/kernel_corpus/generate.py [NAME ...]   # (re)writes tests/kernel_corpus/ttgir/<name>.<chip>.w<warps>.ttgir

Every kernel is compiled with `triton.compile(ASTSource(...), target=GPUTarget("cuda", 80|90, 32)`
(and `GPUTarget("hip", "gfx942", 64)`, 64-lane warps), `options={"num_warps": 1|4|8})` on the CPU (no GPU needed), with `tt.divisibility = 16` on every
pointer argument as Triton's launcher specialises 16-byte aligned pointers (a kernel's `chips` and `num_warps`, when
given, narrow the compiles: the pipelined matmuls are sm_80 with 4 and 8 warps), and on every integer
scalar of the corpus launch that is a multiple of 16 (as the launcher specialises them; no other
specialisation, so a lowering may assume nothing else of the scalars). The files are committed: compile once, store. Source locations are
written relative to `corpus.py`, so the files hold no machine paths. `triton_ptx.json` keeps the
figures of Triton's PTX for each file (`ptx_stats.py`): what our lowering is compared with.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import asdict
from pathlib import Path

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9 default, stated to silence its warning

import numpy as np
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import CASES, KernelCase  # noqa: E402  (after the path entry above)
from ptx_stats import ptx_stats  # noqa: E402

OUT = HERE / "ttgir"
FIGURES = HERE / "triton_ptx.json"  # per file stem: the figures of Triton's own PTX
CHIPS = {"sm80": GPUTarget("cuda", 80, 32), "sm90": GPUTarget("cuda", 90, 32)}
#: 64-lane AMD: lowered and run in the interpreter (no PTX to compare, so no figures).
HIP_CHIPS = {"gfx942": GPUTarget("hip", "gfx942", 64)}
NUM_WARPS = (1, 4, 8)


def stem(name: str, chip: str, num_warps: int) -> str:
    """The file stem of one compile: `vadd.sm80.w4`."""
    return f"{name}.{chip}.w{num_warps}"


def _portable_locations(ttgir: str) -> str:
    """`loc("/abs/.../corpus.py":L:C)` → `loc("corpus.py":L:C)`; Triton's own sources by their
    path inside the package (`triton/language/standard.py`)."""
    ttgir = re.sub(r'"[^"]*/(corpus\.py)"', r'"\1"', ttgir)
    return re.sub(r'"[^"]*/site-packages/(triton/[^"]*)"', r'"\1"', ttgir)


def compiles(kernel: KernelCase) -> list[tuple[str, GPUTarget, int]]:
    """(chip, target, num_warps) of every file `kernel` is compiled to: cuda sm_80 and sm_90
    (or its `chips`), gfx942 unless `hip` is False, each with 1, 4 and 8 warps (or its `num_warps`)."""
    chips = {chip: CHIPS[chip] for chip in (kernel.chips or CHIPS)}
    if kernel.hip:
        chips.update(HIP_CHIPS)
    return [(chip, target, num_warps) for chip, target in chips.items() for num_warps in kernel.num_warps or NUM_WARPS]


def specialisation(kernel: KernelCase) -> dict:
    """`tt.divisibility = 16` where Triton's launcher would put it for the corpus launch: on every
    pointer (16-byte aligned, as numpy's and torch's allocations are) and on every integer
    scalar that is a multiple of 16 (the scalars of `make_inputs` do not depend on its rng)."""
    names = list(kernel.signature)
    values = dict(zip(kernel.argument_names, kernel.make_inputs(np.random.default_rng(0)).args))
    return {
        (names.index(name),): [["tt.divisibility", 16]]
        for name, kind in kernel.signature.items()
        if kind.startswith("*") or (kind in ("i32", "i64") and values[name] % 16 == 0)
    }


def compile_kernel(kernel: KernelCase, target: GPUTarget, num_warps: int) -> tuple[str, dict]:
    """The TTGIR Triton makes of `kernel`, and the figures of its PTX (`ptx_stats`, with
    `shared_bytes` from Triton's metadata: its PTX declares shared memory as an extern array)."""
    source = ASTSource(kernel.fn, kernel.signature, kernel.constexprs, attrs=specialisation(kernel))
    compiled = triton.compile(source, target=target, options={"num_warps": num_warps, **kernel.options})
    figures = {}
    if target.backend == "cuda":
        figures = asdict(ptx_stats(compiled.asm["ptx"]))
        figures["shared_bytes"] = compiled.metadata.shared
    return _portable_locations(compiled.asm["ttgir"]), figures


def main(argv: list[str]) -> int:
    only = set(argv)
    OUT.mkdir(exist_ok=True)
    figures = json.loads(FIGURES.read_text()) if FIGURES.exists() else {}
    for kernel in CASES:
        if only and kernel.name not in only:
            continue
        for chip, target, num_warps in compiles(kernel):
            name = stem(kernel.name, chip, num_warps)
            text, found = compile_kernel(kernel, target, num_warps)
            if found:
                figures[name] = found
            (OUT / f"{name}.ttgir").write_text(text)
            print(f"{name}: {len(text.splitlines())} lines", flush=True)
    lines = [f"  {json.dumps(name)}: {json.dumps(figures[name])}" for name in sorted(figures)]
    FIGURES.write_text("{\n" + ",\n".join(lines) + "\n}\n")  # one line per file
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
