"""The fuzzer's TTGIR cases: real Triton kernels (``tests/kernel_corpus/ttgir`` and
``tests/ttgir_corpus``) mutated the ways a user edits them, run through the whole pipeline.

Mutators (each on the text of one kernel): an alias's layout redrawn consistently (still a valid
layout of its rank, warps and lanes: Triton accepts the edit unless an op's layout inference
disagrees) or broken (numbers and lists edited), tensor shapes (one type, or one size everywhere),
op names (swapped for another op of the corpus or misspelt), attributes (values, dropped, duplicated,
unknown keys), dropped, duplicated and swapped lines, and locations (undefined ``#locN``, edge line
numbers, ``loc`` removed or replaced).

Case kinds (``linear-layout-opt`` unless said):

* ``ttgir-lower``: ``-p 'builtin.module(ll-lower)'``, sometimes with ``-o``;
* ``ttgir-ptx``: the same with ``--emit-ptx --ptx-chip=sm_80|sm_90``;
* ``ttgir-roundtrip``: ``-o out.ttgir``, then the output read again must print the same text;
* ``ttgir-report``: ``linear-layout-report`` (text, ``--json``);
* ``ttgir-run``: an unmutated kernel or one whose layouts were redrawn consistently, lowered
  (`lower_ttgir`) and, when the lowering accepts it, run in the SIMT interpreter over a small
  grid (at most 2 blocks per axis) on the corpus's inputs; its results must equal the unmutated
  kernel's on the same inputs (a layout does not change what a kernel computes).

The oracle for the console-script kinds is stricter than for the other cases: exit 0, or exit 1
where every ``error:`` line carries a location (``file:line:col``); nothing written to ``-o`` on
exit 1.
"""

from __future__ import annotations

import importlib.util
import random
import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType

import numpy as np
from mlir.ir import MLIRError

from ..simt.errors import MemoryAccessError, UndefinedBehaviorError
from ..simt.interpreter import simt_arrays
from ..ttgir import TtgirError, mlir_to_ttgir, parse_ttgir, print_ttgir, ttgir_to_mlir
from .kernels import lower_ttgir, run_triton_kernel, ttgir_to_ptx

__all__ = [
    "KERNEL_API_ERRORS",
    "KERNEL_KINDS",
    "TTGIR_MUTATORS",
    "Kernel",
    "kernel_api_expression",
    "kernel_api_namespace",
    "kernel_case",
    "load_kernels",
    "redraw_layouts",
    "run_kernel_case",
]

KERNEL_KINDS = ("ttgir-lower", "ttgir-ptx", "ttgir-roundtrip", "ttgir-report", "ttgir-run")
ROOT = Path(__file__).resolve().parents[3]
CORPUS_DIRECTORY = ROOT / "tests" / "kernel_corpus"
#: An error line with a location: `file:line:col: error: message`.
LOCATED_ERROR = re.compile(r"^\S.*:\d+:\d+: error: \S")


@dataclass(frozen=True)
class Kernel:
    """One TTGIR file: its stem (``softmax.sm80.w4``) and text; ``runnable`` when the kernel
    corpus holds its inputs (``tests/kernel_corpus/corpus.py``)."""

    stem: str
    text: str
    runnable: bool


def load_kernels(directories: list[Path] | None = None) -> list[Kernel]:
    """Every ``*.ttgir`` under ``directories`` (default: both TTGIR corpora), sorted by path."""
    folders = directories or [CORPUS_DIRECTORY / "ttgir", ROOT / "tests" / "ttgir_corpus"]
    kernels: list[Kernel] = []
    for folder in folders:
        runnable = folder == CORPUS_DIRECTORY / "ttgir"
        kernels.extend(Kernel(path.stem, path.read_text(), runnable) for path in sorted(folder.glob("*.ttgir")))
    return kernels


# ============================================================================ mutators

_ALIAS = re.compile(r"^(#\w+) = (#ttg\.\w+<\{.*\}>)$", re.MULTILINE)
_BLOCKED_ALIAS = re.compile(r"^(#\w+) = #ttg\.blocked<\{sizePerThread = \[([\d, ]+)\].*\}>$", re.MULTILINE)
_WARPS_FIELD = re.compile(r"warpsPerCTA = \[([\d, ]+)\]")
_EDGE_NUMBERS = ("0", "1", "2", "3", "-1", "5", "16", "30", "33", "64", "128", "4096", "2147483648", "9" * 30)
_ATTRIBUTE_VALUES = (
    "0 : i32",
    "1 : i32",
    "-1 : i32",
    "2 : i32",
    "7 : i32",
    "64 : i32",
    "2147483647 : i32",
    "4294967296 : i64",
    "true",
    "false",
    '"cuda:80"',
    '"cuda:75"',
    '"hip:gfx942"',
    '"nope"',
    "1.5 : f32",
    "unit",
    "[1, 2]",
    "#blocked",
    "dense<1> : tensor<2xi32>",
    "array<i32: 1, 2>",
)
_MISSPELT_OPS = ("tt.nope", "ttg.convert_layouts", "tt.load2", "arith.nope", "scf.nope", "tt.", "foo.bar", "tt.dot")
_LOC_REPLACEMENTS = (
    "loc(#loc999999)",
    "loc(unknown)",
    'loc("x.py":0:0)',
    'loc("x.py":4294967296:1)',
    'loc("name")',
    "loc(fused[#loc, #loc1])",
    "loc(callsite(#loc at #loc))",
    "",
    "loc(",
)


def _threads_and_warps(text: str) -> tuple[int, int]:
    """(lanes per warp, warps per CTA) from the module's attributes (32 and 4 when absent)."""
    lanes = re.search(r'"ttg\.threads-per-warp" = (\d+)', text)
    warps = re.search(r'"ttg\.num-warps" = (\d+)', text)
    return int(lanes.group(1)) if lanes else 32, int(warps.group(1)) if warps else 4


def _split_bits(rng: random.Random, total: int, rank: int) -> list[int]:
    """A random split of power of two ``total`` over ``rank`` dims (each a power of two)."""
    sizes = [1] * rank
    for _ in range(max(total.bit_length() - 1, 0)):
        sizes[rng.randrange(rank)] *= 2
    return sizes


def _listed(values: list[int]) -> str:
    return "[" + ", ".join(str(value) for value in values) + "]"


def _redrawn_blocked(rng: random.Random, rank: int, lanes: int, warps: int) -> str:
    """A valid ``#ttg.blocked`` of ``rank`` dims for ``lanes`` lanes and ``warps`` warps."""
    order = list(range(rank))
    rng.shuffle(order)
    return (
        f"#ttg.blocked<{{sizePerThread = {_listed([rng.choice((1, 1, 2, 4, 8)) for _ in range(rank)])}, "
        f"threadsPerWarp = {_listed(_split_bits(rng, lanes, rank))}, "
        f"warpsPerCTA = {_listed(_split_bits(rng, warps, rank))}, order = {_listed(order)}}}>"
    )


def redraw_layouts(rng: random.Random, text: str) -> str:
    """One alias's layout redrawn as another valid layout of its rank, lanes and warps (a blocked
    layout redrawn whole, any other layout's ``warpsPerCTA`` split anew); every use follows the alias."""
    lanes, warps = _threads_and_warps(text)
    aliases = list(_ALIAS.finditer(text))
    if not aliases:
        return text
    alias = rng.choice(aliases)
    blocked = _BLOCKED_ALIAS.match(alias.group(0))
    if blocked:
        rank = blocked.group(2).count(",") + 1
        line = f"{alias.group(1)} = {_redrawn_blocked(rng, rank, lanes, warps)}"
    else:
        warps_field = _WARPS_FIELD.search(alias.group(0))
        if not warps_field:
            return text
        rank = warps_field.group(1).count(",") + 1
        line = _WARPS_FIELD.sub(f"warpsPerCTA = {_listed(_split_bits(rng, warps, rank))}", alias.group(0), count=1)
    return text[: alias.start()] + line + text[alias.end() :]


def _replace_one(rng: random.Random, text: str, pattern: str | re.Pattern[str], replacement: str) -> str:
    matches = list(re.finditer(pattern, text))
    if not matches:
        return text
    match = rng.choice(matches)
    return text[: match.start()] + replacement + text[match.end() :]


def _break_layout(rng: random.Random, text: str) -> str:
    """A number or a list in one alias's layout edited (often an invalid layout)."""
    aliases = list(_ALIAS.finditer(text))
    if not aliases:
        return text
    alias = rng.choice(aliases)
    line = alias.group(0)
    if rng.random() < 0.5:
        line = _replace_one(rng, line, r"(?<![\w.#])\d+(?![\w.])", rng.choice(_EDGE_NUMBERS))
    else:
        values = [rng.choice(_EDGE_NUMBERS[:8]) for _ in range(rng.randrange(0, 4))]
        line = _replace_one(rng, line, r"\[[\d, ]*\]", "[" + ", ".join(values) + "]")
    return text[: alias.start()] + line + text[alias.end() :]


def _mutate_shape(rng: random.Random, text: str) -> str:
    """One tensor type's shape edited, or one size replaced in every tensor type."""
    shapes = list(re.finditer(r"(?<=tensor<)(\d+x)+", text))
    if not shapes:
        return text
    size = rng.choice(("1", "2", "16", "32", "64", "128", "256", "3", "0", "65536", "2147483648"))
    if rng.random() < 0.5:
        match = rng.choice(shapes)
        dims = match.group(0)[:-1].split("x")
        dims[rng.randrange(len(dims))] = size
        if rng.random() < 0.2:
            dims = dims[:-1] if len(dims) > 1 else [*dims, size]
        return text[: match.start()] + "x".join(dims) + "x" + text[match.end() :]
    old = rng.choice(re.findall(r"\d+", rng.choice(shapes).group(0)))
    return re.sub(r"(?<=tensor<)(\d+x)+", lambda m: re.sub(rf"\b{old}x", f"{size}x", m.group(0)), text)


_OP_NAME = re.compile(r"(?<=[ \"])(tt|ttg|ttng|amdg|arith|math|scf|gpu|llvm|nvvm|rocdl)\.[a-z_.]+(?=[\" ])")


def _mutate_op_name(rng: random.Random, text: str) -> str:
    """One op's name replaced by another op of the same kernel or a misspelt one."""
    names = sorted({match.group(0) for match in _OP_NAME.finditer(text)})
    if not names:
        return text
    pool = names + list(_MISSPELT_OPS)
    return _replace_one(rng, text, _OP_NAME, rng.choice(pool))


_ATTRIBUTE = re.compile(r'(?<=[{,] )("?[\w.-]+"?) = ([^,{}<>\[\]]+|\[[^\]]*\]|"[^"]*")(?=[,}])')


def _mutate_attribute(rng: random.Random, text: str) -> str:
    """One attribute's value replaced, the attribute dropped or duplicated, or an unknown key added."""
    matches = list(_ATTRIBUTE.finditer(text))
    if not matches:
        return text
    match = rng.choice(matches)
    key, value = match.group(1), match.group(2)
    choice = rng.random()
    if choice < 0.5:
        replacement = f"{key} = {rng.choice(_ATTRIBUTE_VALUES)}"
    elif choice < 0.7:  # dropped, with its separator
        start = match.start() - 2 if text[match.start() - 2] == "," else match.start()
        end = match.end() + 2 if start == match.start() and text[match.end()] == "," else match.end()
        return text[:start] + text[end:]
    elif choice < 0.85:
        replacement = f"{key} = {value}, {key} = {value}"
    else:
        unknown = rng.choice(("nope", "tt.nope", '"ttg.nope"'))
        replacement = f"{key} = {value}, {unknown} = 1 : i32"
    return text[: match.start()] + replacement + text[match.end() :]


def _mutate_loc(rng: random.Random, text: str) -> str:
    """A location reference, a location's line number or a ``#locN`` definition edited."""
    choice = rng.random()
    if choice < 0.4:
        return _replace_one(rng, text, r"loc\(#loc\d*\)", rng.choice(_LOC_REPLACEMENTS))
    if choice < 0.6:
        return _replace_one(rng, text, r'(?<=":)\d+(?=:\d+\))', rng.choice(_EDGE_NUMBERS))
    if choice < 0.8:
        return _replace_one(rng, text, r"(?m)^#loc\d* = .*\n", "")
    return _replace_one(rng, text, r"#loc\d+", rng.choice(("#loc999999", "#loc", "#blocked", "#loc0")))


def _lines(rng: random.Random, text: str) -> str:
    """A line of the kernel dropped, duplicated or swapped with another."""
    lines = text.split("\n")
    first, second = rng.randrange(len(lines)), rng.randrange(len(lines))
    choice = rng.random()
    if choice < 0.45:
        del lines[first]
    elif choice < 0.9:
        lines.insert(first, lines[first])
    else:
        lines[first], lines[second] = lines[second], lines[first]
    return "\n".join(lines)


TTGIR_MUTATORS = (
    redraw_layouts,
    redraw_layouts,
    _break_layout,
    _break_layout,
    _mutate_shape,
    _mutate_op_name,
    _mutate_attribute,
    _mutate_attribute,
    _mutate_loc,
    _lines,
    _lines,
)


def mutate_kernel(rng: random.Random, text: str) -> str:
    """``text`` with 1-3 TTGIR mutations."""
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        text = rng.choice(TTGIR_MUTATORS)(rng, text)
    return text


# ============================================================================ cases


def kernel_case(rng: random.Random, kernels: list[Kernel], case_type: type) -> object:
    """A case of one of ``KERNEL_KINDS`` on a kernel of ``kernels`` (``case_type`` is ``fuzz.Case``)."""
    kind = rng.choice(KERNEL_KINDS)
    runnable = [kernel for kernel in kernels if kernel.runnable]
    if kind == "ttgir-run" and runnable:
        kernel = rng.choice(runnable)
        text = kernel.text
        for _ in range(rng.choice((0, 1, 1, 2))):
            text = redraw_layouts(rng, text)
        return case_type(kind, (kernel.stem, str(rng.randrange(3))), text)
    kernel = rng.choice(kernels)
    text = kernel.text if rng.random() < 0.05 else mutate_kernel(rng, kernel.text)
    if kind == "ttgir-report":
        return case_type(kind, ("{input.ttgir}", *(("--json",) if rng.random() < 0.3 else ())), text)
    if kind == "ttgir-roundtrip":
        return case_type(kind, ("{input.ttgir}", "-o", "{tmp}/out.ttgir"), text)
    argv = ["{input.ttgir}", "-p", "builtin.module(ll-lower)"]
    if kind == "ttgir-ptx":
        argv += ["--emit-ptx", f"--ptx-chip={rng.choice(('sm_80', 'sm_90'))}"]
    if rng.random() < 0.3:
        argv += ["-o", "{tmp}/out.mlir"]
    return case_type("ttgir-lower" if kind == "ttgir-run" else kind, tuple(argv), text)


def unlocated_errors(stderr: str) -> list[str]:
    """The ``error:`` lines of ``stderr`` without a ``file:line:col`` location."""
    return [line for line in stderr.splitlines() if ": error: " in line and not LOCATED_ERROR.match(line)]


# ============================================================================ API inputs: the kernel pipeline's entry points

#: What the kernel pipeline's API raises for bad input besides TypeError/ValueError (TtgirError is
#: a ValueError): the lowering's diagnostics, and the interpreter's refusal of a buffer too small
#: for the kernel's accesses or of scalars that make it divide by zero.
KERNEL_API_ERRORS = (MLIRError, MemoryAccessError, UndefinedBehaviorError)
_VADD_STEM = "vadd.sm80.w1"


def kernel_api_namespace() -> dict:
    """The kernel pipeline's public functions, and ``VADD``, a small corpus kernel's TTGIR."""
    path = CORPUS_DIRECTORY / "ttgir" / f"{_VADD_STEM}.ttgir"
    return {
        "lower_ttgir": lower_ttgir,
        "ttgir_to_ptx": ttgir_to_ptx,
        "run_triton_kernel": run_triton_kernel,
        "parse_ttgir": parse_ttgir,
        "ttgir_to_mlir": ttgir_to_mlir,
        "print_ttgir": print_ttgir,
        "mlir_to_ttgir": mlir_to_ttgir,
        "VADD": path.read_text() if path.exists() else "",
    }


_KERNEL_TEXTS = ("VADD", "VADD", "None", "1", "b'x'", "''", "'module {}'", "['VADD']", "VADD * 2", "VADD[:500]")
_VADD_ARGUMENTS = (
    "np.zeros(1024, np.float32)",
    "np.zeros(1024, np.float32)",
    "np.zeros(1024, np.float32)",
    "1000",
)
_BAD_ARGUMENTS = (
    "None",
    "np.zeros(4, np.float32)",
    "np.zeros(1024, np.int8)",
    "np.zeros(1024, np.float64)",
    "np.zeros((64, 64), np.float32)[:, ::2]",
    "np.zeros(0, np.float32)",
    "np.zeros(1024, np.float32).astype(object)",
    "2**40",
    "-1",
    "1.5",
    "'x'",
    "[1.0] * 1024",
    "np.float32(3)",
)
_GRIDS = ("(1,)", "(2,)", "(1, 1)", "(1, 1, 1)", "(0,)", "(-1,)", "()", "None", "'x'", "(1.5,)", "(1, 1, 1, 1)", "[2]")


def kernel_api_expression(rng: random.Random, kernels: list[Kernel]) -> str:
    """A call of the kernel pipeline's API (``kernel_api_namespace``) with drawn arguments: kernel
    texts valid, mutated or of the wrong type, chips, argument lists of the wrong length, type,
    dtype, size or layout, and grids."""
    text = rng.choice(_KERNEL_TEXTS)
    small = [kernel for kernel in kernels if kernel.stem.startswith("vadd.")]
    if small and rng.random() < 0.3:
        text = repr(mutate_kernel(rng, rng.choice(small).text))
    arguments = list(_VADD_ARGUMENTS)
    edit = rng.random()
    if edit < 0.4:
        arguments[rng.randrange(len(arguments))] = rng.choice(_BAD_ARGUMENTS)
    elif edit < 0.5:
        arguments.pop(rng.randrange(len(arguments)))
    elif edit < 0.6:
        arguments.append(rng.choice(_BAD_ARGUMENTS))
    args = "[" + ", ".join(arguments) + "]"
    chip = rng.choice(("'sm_80'", "'sm_90'", "'sm_1000'", "None", "80", "''"))
    call = rng.choice(
        (
            "lower_ttgir({t})",
            "lower_ttgir({t}, chip={c})",
            "ttgir_to_ptx({t}, chip={c})",
            "parse_ttgir({t})",
            "print_ttgir(parse_ttgir({t}))",
            "mlir_to_ttgir(ttgir_to_mlir({t}))",
            "run_triton_kernel(lower_ttgir(VADD), {a}, {g})",
            "run_triton_kernel(lower_ttgir(VADD), {a}, {g})",
            "run_triton_kernel(lower_ttgir({t}), {a}, {g}, kernel={k})",
            "run_triton_kernel({t}, {a}, {g})",
        )
    )
    kernel = rng.choice(("None", "'vadd_kernel'", "'nope'", "1"))
    return call.format(t=text, c=chip, a=args, g=rng.choice(_GRIDS), k=kernel)


# ============================================================================ the run mode (in the worker)


@cache
def _corpus() -> ModuleType | None:
    """``tests/kernel_corpus/corpus.py`` (the kernels' inputs), or None without it or without Triton."""
    path = CORPUS_DIRECTORY / "corpus.py"
    if not path.exists() or importlib.util.find_spec("triton") is None:
        return None
    spec = importlib.util.spec_from_file_location("_ll_fuzz_kernel_corpus", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class RunResult:
    """What a ``ttgir-run`` case did: ``rejected`` (the lowering's one-line error), or the arrays
    the kernel left in its pointer arguments."""

    rejected: str = ""
    arrays: tuple[np.ndarray, ...] = ()


def _lower_and_run(text: str, stem: str, seed: int) -> RunResult:
    """Lower ``text`` and run it on corpus kernel ``stem``'s inputs (drawn with ``seed``), at most
    2 blocks per grid axis. Exceptions other than the lowering's user errors propagate."""
    corpus = _corpus()
    assert corpus is not None
    try:
        module = lower_ttgir(text)
    except (TtgirError, MLIRError) as error:
        return RunResult(rejected=" ".join(str(error).split())[:300] or type(error).__name__)
    launch = corpus.case(stem.split(".")[0]).make_inputs(np.random.default_rng(seed))
    args = simt_arrays(launch.args)  # bf16 inputs as the float32 of their values
    run_triton_kernel(module, args, tuple(min(size, 2) for size in launch.grid))
    return RunResult(arrays=tuple(arg for arg in args if isinstance(arg, np.ndarray)))


@cache
def _original_run(stem: str, seed: int) -> RunResult:
    text = next(kernel.text for kernel in load_kernels([CORPUS_DIRECTORY / "ttgir"]) if kernel.stem == stem)
    return _lower_and_run(text, stem, seed)


def _same_results(expected: tuple[np.ndarray, ...], got: tuple[np.ndarray, ...], exact: bool) -> bool:
    for want, have in zip(expected, got, strict=True):
        if exact or not np.issubdtype(want.dtype, np.floating):
            if not np.array_equal(want, have, equal_nan=np.issubdtype(want.dtype, np.floating)):
                return False
        elif not np.allclose(want, have, rtol=1e-4, atol=1e-6, equal_nan=True):
            return False
    return True


def run_kernel_case(stem: str, seed: int, text: str) -> tuple[str, str]:
    """(outcome, detail) of a ``ttgir-run`` case: "ok", "user-error" (the lowering refused the
    kernel), "skipped" (no corpus inputs here) or "wrong-result"; an exception propagates."""
    if _corpus() is None:
        return "skipped", "tests/kernel_corpus/corpus.py or triton is not available"
    result = _lower_and_run(text, stem, seed)
    if result.rejected:
        return "user-error", result.rejected
    original = _original_run(stem, seed)
    exact = bool(_corpus().case(stem.split(".")[0]).exact)  # type: ignore[union-attr]
    if original.rejected or not _same_results(original.arrays, result.arrays, exact):
        return "wrong-result", f"{stem} seed {seed}: results differ from the unmutated kernel's"
    return "ok", ""
