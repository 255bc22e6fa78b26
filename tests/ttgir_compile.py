"""Triton compiles of TTGIR text for the tests, in parallel worker processes.

Triton 3.9 compiles one corpus file in 1-25 s of one core (LLVM's code generation is most of it,
`triton.compile`'s make_llir and make_ptx/make_amdgcn stages), and the round-trip test compiles
every file twice. `COMPILES.submit(text, stem)` starts a compile in a pool of spawned worker
processes (one per core) and returns the future of its PTX/AMDGCN, so that the compiles of a
module run side by side while the tests wait for theirs. Every compile runs in its own empty
Triton cache (nothing is reused from an earlier run or another compile); within one test session
the same text for the same target is compiled once (`test_ttgir.py` and `test_ttgir_driver.py`
share the original kernels' assembly).

Every compile runs in a fresh worker process (`max_tasks_per_child=1`). Triton 3.9's output is not
a function of its input alone: in one process, after a few other corpus kernels, the AMDGCN of
`matmul_i8.gfx1200` came out with a different register assignment (1 of 6 repeats; the same text
compiled in fresh processes gave the same bytes 14 of 14 times). Reused workers made the
round-trip test fail on a loaded machine, where the two texts of a file met different histories.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import tempfile
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

__all__ = ["COMPILES", "assembly", "compile_ttgir", "target_of"]


def target_of(stem: str):
    """The GPUTarget of corpus file `stem` (`matmul_f16.sm80`, `softmax.gfx942`, ...)."""
    from triton.backends.compiler import GPUTarget  # only where Triton is installed

    name = stem.split(".")[1]
    if name.startswith("sm"):
        return GPUTarget("cuda", int(name[2:]), 32)
    return GPUTarget("hip", name, 64 if name == "gfx942" else 32)


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


class _Compiles:
    """The worker pool (started on first use) and the futures of this session's compiles."""

    def __init__(self) -> None:
        self.pool: ProcessPoolExecutor | None = None
        self.futures: dict[tuple[str, str], Future] = {}

    def submit(self, text: str, stem: str) -> Future:
        key = (stem, text)
        if key not in self.futures:
            if self.pool is None:
                self.pool = ProcessPoolExecutor(
                    max_workers=os.cpu_count() or 1,
                    mp_context=multiprocessing.get_context("spawn"),
                    max_tasks_per_child=1,  # a fresh process per compile: see the module docstring
                )
                atexit.register(self.close)
            self.futures[key] = self.pool.submit(compile_ttgir, text, stem)
        return self.futures[key]


    def close(self) -> None:
        """Shut the pool down and end its idle workers: with `max_tasks_per_child`, the pool starts
        a fresh worker after each task, and shutdown leaves the last ones waiting (they kept the
        session's output pipe open after pytest had ended)."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            for child in multiprocessing.active_children():
                child.terminate()
            self.pool = None


COMPILES = _Compiles()


def assembly(text: str, stem: str) -> str:
    """The assembly of `text` (waits for its compile, started now unless it already was)."""
    return COMPILES.submit(text, stem).result()
