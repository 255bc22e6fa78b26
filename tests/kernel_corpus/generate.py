"""Write the kernel corpus's TTGIR: each kernel of `corpus.py` compiled by Triton 3.9.

    python tests/kernel_corpus/generate.py [NAME ...]   # (re)writes tests/kernel_corpus/ttgir/<name>.<chip>.w<warps>.ttgir

Every kernel is compiled with `triton.compile(ASTSource(...), target=GPUTarget("cuda", 80|90, 32),
options={"num_warps": 1|4|8})` on the CPU (no GPU needed), with `tt.divisibility = 16` on every
pointer argument as Triton's launcher specialises 16-byte aligned pointers, and no other
specialisation (the scalar arguments are plain `i32`/`f32`, so a lowering may not assume they are
multiples of anything). The files are committed: compile once, store. Source locations are
written relative to `corpus.py`, so the files hold no machine paths.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9 default, stated to silence its warning

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import CASES, KernelCase  # noqa: E402  (after the path entry above)

OUT = HERE / "ttgir"
CHIPS = {"sm80": GPUTarget("cuda", 80, 32), "sm90": GPUTarget("cuda", 90, 32)}
NUM_WARPS = (1, 4, 8)


def stem(name: str, chip: str, num_warps: int) -> str:
    """The file stem of one compile: `vadd.sm80.w4`."""
    return f"{name}.{chip}.w{num_warps}"


def _portable_locations(ttgir: str) -> str:
    """`loc("/abs/.../corpus.py":L:C)` → `loc("corpus.py":L:C)`; Triton's own sources by their
    path inside the package (`triton/language/standard.py`)."""
    ttgir = re.sub(r'"[^"]*/(corpus\.py)"', r'"\1"', ttgir)
    return re.sub(r'"[^"]*/site-packages/(triton/[^"]*)"', r'"\1"', ttgir)


def _pointer_alignment(kernel: KernelCase) -> dict:
    names = list(kernel.signature)
    return {
        (names.index(name),): [["tt.divisibility", 16]]
        for name, kind in kernel.signature.items()
        if kind.startswith("*")
    }


def compile_ttgir(kernel: KernelCase, target: GPUTarget, num_warps: int) -> str:
    source = ASTSource(kernel.fn, kernel.signature, kernel.constexprs, attrs=_pointer_alignment(kernel))
    compiled = triton.compile(source, target=target, options={"num_warps": num_warps, **kernel.options})
    return _portable_locations(compiled.asm["ttgir"])


def main(argv: list[str]) -> int:
    only = set(argv)
    OUT.mkdir(exist_ok=True)
    for kernel in CASES:
        if only and kernel.name not in only:
            continue
        for chip, target in CHIPS.items():
            for num_warps in NUM_WARPS:
                text = compile_ttgir(kernel, target, num_warps)
                (OUT / f"{stem(kernel.name, chip, num_warps)}.ttgir").write_text(text)
                print(f"{stem(kernel.name, chip, num_warps)}: {len(text.splitlines())} lines", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
