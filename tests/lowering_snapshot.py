"""The lowered output of a fixed kernel set, to prove a refactoring of the lowering byte-identical.

The set: every kernel of `benchmarks/bench_lowering.py` (its suite and a 100-conversion module of
its throughput case) through `ll-lower`, every kernel of `benchmarks/bench_codegen.py` through
`ll-lower{chip=sm_90}` and `ll-lower{chip=sm_80}`, and every lit test input of
`tests/lit/lowering/` through the `linear-layout-opt` command of each of its RUN lines (output
and diagnostics). `tests/test_lowering_snapshot.py` compares the set with the stored copy
`tests/lowering_snapshot.json.gz`; a deliberate change of the lowered output refreshes it with

    python tests/lowering_snapshot.py --update
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STORED = Path(__file__).with_name("lowering_snapshot.json.gz")
LIT_LOWERING = ROOT / "tests" / "lit" / "lowering"


def _benchmark(name: str):
    """A benchmark module (benchmarks/ is not a package)."""
    import importlib.util

    sys.path.insert(0, str(ROOT / "tests"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _lower(text: str, pipeline: str) -> str:
    from mlir import ir

    from linear_layout.ir import load_dialects
    from linear_layout.passes import build_pass_manager

    context = ir.Context()
    load_dialects(context)
    with context:
        module = ir.Module.parse(text)
        build_pass_manager(pipeline, context).run(module.operation)
        return str(module)


def bench_kernels() -> Iterator[tuple[str, str, str]]:
    """(name, kernel text, pipeline) of every benchmark kernel."""
    lowering = _benchmark("bench_lowering")
    for name, (src, dst, warps) in lowering.SUITE.items():
        yield f"bench_lowering/{name}", lowering.our_kernel(src, dst, warps), "ll-lower"
    src, dst, warps = lowering.SUITE["register<->lane transpose"]
    yield "bench_lowering/throughput 100", lowering.many_kernels(src, dst, warps, 100, 100), "ll-lower"
    codegen = _benchmark("bench_codegen")
    for name, a, b, shape, dtype, warps in codegen.suite():
        src, dst = a.to_linear_layout(list(shape)), b.to_linear_layout(list(shape))
        text = codegen.kernel_text(src, dst, dtype, warps, encodings=(str(a), str(b)))
        for chip in ("sm_90", "sm_80"):
            yield f"bench_codegen/{name} {chip}", text, f"ll-lower{{chip={chip}}}"


def lit_commands() -> Iterator[tuple[str, list[str]]]:
    """(name, linear-layout-opt arguments) of the first command of every RUN line."""
    for path in sorted(LIT_LOWERING.glob("*.mlir")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = re.search(r"RUN:\s*(.*)", line)
            if match is None:
                continue
            words = shlex.split(match.group(1).split("|")[0].replace("2>&1", ""))
            words = words[1:] if words[0] == "not" else words
            assert words[0] == "linear-layout-opt", line
            arguments = [w.replace("%s", str(path)).replace("%S", str(path.parent)) for w in words[1:]]
            yield f"lit/{path.name}:{number}", arguments
            if "--verify-diagnostics" in arguments:  # the diagnostics themselves
                yield f"lit/{path.name}:{number} diagnostics", [a for a in arguments if a != "--verify-diagnostics"]


def _run_tool(arguments: list[str]) -> str:
    from linear_layout.tools.opt import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(arguments)
    return f"exit {code}\n--- stdout\n{out.getvalue()}--- stderr\n{err.getvalue()}".replace(str(ROOT), "<root>")


def collect() -> dict[str, str]:
    """name -> lowered text (or the tool's exit code, output and diagnostics)."""
    found = {name: _lower(text, pipeline) for name, text, pipeline in bench_kernels()}
    found.update((name, _run_tool(arguments)) for name, arguments in lit_commands())
    return found


def stored() -> dict[str, str]:
    with gzip.open(STORED, "rt") as f:
        return json.load(f)


def main(argv: list[str]) -> int:
    found = collect()
    if argv == ["--update"]:
        with gzip.GzipFile(STORED, "wb", mtime=0) as f:
            f.write(json.dumps(found, indent=0, sort_keys=True).encode())
        print(f"stored {len(found)} lowerings in {STORED.name}")
        return 0
    old = stored()
    changed = sorted(name for name in found.keys() | old.keys() if found.get(name) != old.get(name))
    for name in changed:
        print(f"changed: {name}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
