"""Triton compiles of TTGIR text for the tests, in parallel child processes.

Triton 3.9 compiles one corpus file in 1-25 s of one core (LLVM's code generation is most of it,
`triton.compile`'s make_llir and make_ptx/make_amdgcn stages), and the round-trip test compiles
every file and its rewrite (once, where the rewrite is the same text). `COMPILES.submit(text, stem)` starts a compile in a fresh child process (as many
at once as there are cores) and returns the future of its PTX/AMDGCN, so that the compiles of a
module run side by side while the tests wait for theirs. Every compile runs in its own empty
Triton cache (nothing is reused from an earlier run or another compile); within one test session
the same text for the same target is compiled once (`test_ttgir.py` and `test_ttgir_driver.py`
share the original kernels' assembly).

Every compile runs in a fresh child process (`subprocess`, which ends with its compile: a process
pool with `max_tasks_per_child=1` left idle workers behind, which held pytest's output open).
Triton 3.9's output is not a function of its input alone: in one process, after a few other
corpus kernels, the AMDGCN of `matmul_i8.gfx1200` came out with a different register assignment (1 of 6 repeats; the same text
compiled in fresh processes gave the same bytes 14 of 14 times). Reused workers made the
round-trip test fail on a loaded machine, where the two texts of a file met different histories.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

__all__ = ["COMPILES", "assembly", "compile_ttgir", "target_of"]


def target_of(stem: str):
    """The GPUTarget of corpus file `stem` (`matmul_f16.sm80`, `softmax.gfx942`, ...)."""
    from triton.backends.compiler import GPUTarget  # only where Triton is installed

    name = stem.split(".")[1]
    if name.startswith("sm"):
        return GPUTarget("cuda", int(name[2:]), 32)
    return GPUTarget("hip", name, 64 if name in ("gfx942", "gfx950") else 32)


def compile_ttgir(text: str, stem: str) -> str:
    """Triton's PTX (cuda) or AMDGCN (hip) for TTGIR `text` of corpus file `stem`, compiled by
    `triton.compile(path, target=...)` in a fresh cache directory."""
    with tempfile.TemporaryDirectory() as directory:
        os.environ["TRITON_CACHE_DIR"] = str(Path(directory) / "cache")
        os.environ["TRITON_DEFAULT_FP_FUSION"] = "1"
        import triton  # in the worker, after the environment is set

        path = Path(directory) / "kernel.ttgir"
        path.write_text(text)
        kernel = triton.compile(str(path), target=target_of(stem))
    assembly_text = kernel.asm.get("ptx") or kernel.asm.get("amdgcn")
    if not assembly_text or len(assembly_text) < 500:
        raise AssertionError(f"Triton produced no assembly for {stem}")
    return assembly_text


_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
from ttgir_compile import compile_ttgir
sys.stdout.write(compile_ttgir(sys.stdin.read(), sys.argv[2]))
"""


def _compile_in_child(text: str, stem: str) -> str:
    """`compile_ttgir` in a fresh Python process; a file Triton refuses raises RuntimeError with
    the end of Triton's message."""
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, str(Path(__file__).parent), stem],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"Triton did not compile {stem}: {result.stderr.strip()[-2000:]}")
    return result.stdout


class _Compiles:
    """The threads that wait for the compiles (one per core) and the futures of this session's
    compiles; each compile runs in its own child process, which ends with it."""

    def __init__(self) -> None:
        self.pool: ThreadPoolExecutor | None = None
        self.futures: dict[tuple[str, str], Future] = {}

    def submit(self, text: str, stem: str) -> Future:
        key = (stem, text)
        if key not in self.futures:
            if self.pool is None:
                self.pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1)
                atexit.register(self.pool.shutdown, cancel_futures=True)
            self.futures[key] = self.pool.submit(_compile_in_child, text, stem)
        return self.futures[key]


COMPILES = _Compiles()


def assembly(text: str, stem: str) -> str:
    """The assembly of `text` (waits for its compile, started now unless it already was)."""
    return COMPILES.submit(text, stem).result()
