"""`linear-layout-fuzz`: a grammar-aware mutation fuzzer for `linear-layout-opt` and the public Python API.

    linear-layout-fuzz --count 2000 --seed 1 --out fuzz-findings/
    linear-layout-fuzz --minutes 30 --out fuzz-findings/

Inputs:

* **Driver cases** mutate the valid IR of ``tests/lit`` and ``examples`` (or ``--seeds DIR``): numbers
  replaced by edge values, element types swapped (``f80``, ``i1``, ``index``), encoding names and keys
  misspelt, lines deleted, duplicated and swapped, brackets inserted, deep nesting and huge shapes,
  chunks spliced together. Each runs ``linear-layout-opt`` with a random pipeline of this project's
  passes and upstream ones (also nested in ``func.func(...)``), ``--split-input-file`` and
  ``--emit-ptx`` with a random chip, ``--emit-amdgcn``/``--emit-rocdl-llvm`` with a random AMD chip.
* **API cases** are Python expressions calling ``LinearLayout``, ``parse_encoding``,
  ``to_linear_layout`` and ``plan_conversion`` with wrong types, huge sizes, deep nesting and mutated
  encodings.
* **Draw cases** run ``linear-layout-draw`` on mutated encodings (one layout, a conversion, a shared
  layout with an access), with random shapes, bit widths, colourings and widths, and on mutated TTGIR
  files (``--ttgir FILE --line N``).
* **Report cases** run ``linear-layout-report`` on mutated TTGIR (``tests/ttgir_corpus``), also with
  ``--json`` and ``--html``.

Each batch of cases runs in a worker subprocess, case by case, with stdout and stderr captured at the
file-descriptor level; a console script's input file (``{input}`` in its arguments) and output files
(``{tmp}``) live in a temporary folder per case. A case that kills the worker is a **crash** (signal), one that takes longer than
``--timeout`` seconds a **hang**; the worker is restarted after either. The other findings:
**traceback** ("Traceback" in stderr, or an exception escaping a console script's ``main``),
**internal error** (a console script's ``internal error:`` line, or an API exception other than
``TypeError``/``ValueError``), **wrong exit** (an exit code other than 0
and 1, or stderr lines that are not ``where: error|warning|note|remark: message`` diagnostics). Every
finding is written to ``--out`` as a reproducer that ``tests/test_fuzz.py`` can replay from
``tests/fuzz_corpus/``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import resource
import selectors
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import LinearLayout
from .. import __all__ as _PUBLIC_NAMES
from .. import encodings as _encodings
from ..core import builders as _builders
from . import draw, fuzz_ttgir, opt, report

__all__ = ["Case", "Finding", "FuzzReport", "classify", "generate_cases", "main", "run_cases"]

ROOT = Path(__file__).resolve().parents[3]
FINDING_KINDS = ("crash", "hang", "traceback", "internal-error", "wrong-exit", "bad-output", "wrong-result")
USER_ERRORS = ("TypeError", "ValueError")
USER_ERROR_CLASSES = (TypeError, ValueError)
_DIAGNOSTIC = re.compile(r"^\S.*?: (error|warning|note|remark): \S")
# How the pass framework reports an exception escaping a pass (a bug, not a user error).
_PASS_BUG = re.compile(r"pass '[\w-]+' failed: \w+")
# A TypeError/ValueError Python raised from deep inside the API instead of the API's own argument
# check (which names the argument): a bug, classified as an internal error.
_RAW_PYTHON_ERROR = re.compile(
    r"unhashable type|not supported between instances of|object is not (?:iterable|subscriptable)|"
    r"has no len\(\)|sequence item \d+: expected|iteration over a 0-d array|truth value of an array|"
    r"only integer scalar arrays|Exceeds the limit \(\d+ digits\)|invalid literal for int|"
    r"cannot convert float|tuple indices must be|list indices must be|too many values to unpack|"
    r"not enough values to unpack"
)


@dataclass(frozen=True)
class Case:
    """One input: a console-script run (``argv`` and ``stdin``) or an API expression (``expression``)."""

    kind: str  # "driver" (linear-layout-opt), "draw", "report", "api" or one of fuzz_ttgir.KERNEL_KINDS
    argv: tuple[str, ...] = ()
    stdin: str = ""
    expression: str = ""

    def to_json(self) -> str:
        return json.dumps(
            {"kind": self.kind, "argv": list(self.argv), "stdin": self.stdin, "expression": self.expression}
        )

    @staticmethod
    def from_json(text: str) -> Case:
        data = json.loads(text)
        return Case(data["kind"], tuple(data["argv"]), data["stdin"], data["expression"])


@dataclass(frozen=True)
class Outcome:
    """What one case did: exit code (driver) or exception class (API), and its stderr."""

    exit_code: int | None
    stderr: str
    exception: str | None = None
    message: str = ""
    user_error: bool = False  # the API exception is a TypeError or ValueError (subclasses included)
    output_problem: str = ""  # a half-written -o file, or a TTGIR round trip that does not reach a fixed point


@dataclass(frozen=True)
class Finding:
    kind: str  # one of FINDING_KINDS
    case: Case
    detail: str


@dataclass(frozen=True)
class FuzzReport:
    inputs: int
    seconds: float
    outcomes: dict[str, int]  # "ok", "user-error", "skipped" and the finding kinds -> count
    findings: tuple[Finding, ...] = field(default=())
    by_kind: dict[str, int] = field(default_factory=dict)  # case kind -> number of inputs

    def summary(self) -> str:
        counts = ", ".join(f"{kind} {self.outcomes.get(kind, 0)}" for kind in ("ok", "user-error", *FINDING_KINDS))
        skipped = f", skipped {self.outcomes['skipped']}" if self.outcomes.get("skipped") else ""
        return f"{self.inputs} inputs in {self.seconds:.1f} s: {counts}{skipped}"

    def kinds_summary(self) -> str:
        return "inputs per kind: " + ", ".join(f"{kind} {count}" for kind, count in sorted(self.by_kind.items()))


# ============================================================================ classification


def _stray_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip() and not _DIAGNOSTIC.match(line)]


def classify(case: Case, outcome: Outcome) -> tuple[str, str]:
    """(outcome kind, detail): "ok", "user-error", "skipped" or a finding kind."""
    if "Traceback" in outcome.stderr:
        return "traceback", outcome.stderr[-400:]
    if case.kind == "ttgir-run":
        if outcome.exception in (None, "user-error", "skipped", "wrong-result"):
            return outcome.exception or "ok", outcome.message
        return "internal-error", f"{outcome.exception}: {outcome.message}"[:400]
    if case.kind == "api":
        if outcome.exception is None:
            return "ok", ""
        if (outcome.user_error or outcome.exception in USER_ERRORS) and _RAW_PYTHON_ERROR.search(outcome.message):
            return "internal-error", f"raw Python {outcome.exception}: {outcome.message}"[:400]
        if outcome.user_error or outcome.exception in USER_ERRORS:
            return "user-error", outcome.message
        return "internal-error", f"{outcome.exception}: {outcome.message}"[:400]
    if "internal error" in outcome.stderr or _PASS_BUG.search(outcome.stderr):
        return "internal-error", outcome.stderr[:400]
    if outcome.exit_code not in (0, 1):
        return "wrong-exit", f"exit code {outcome.exit_code}: {outcome.stderr[:300]}"
    stray = _stray_lines(outcome.stderr)
    if stray:
        return "wrong-exit", f"exit code {outcome.exit_code}, stray stderr line: {stray[0][:300]}"
    if outcome.exit_code == 1 and not outcome.stderr.strip():
        return "wrong-exit", "exit code 1 without an error message"
    if outcome.output_problem:
        return "bad-output", outcome.output_problem
    unlocated = fuzz_ttgir.unlocated_errors(outcome.stderr) if case.kind in fuzz_ttgir.KERNEL_KINDS else []
    if unlocated:
        return "wrong-exit", f"error without a file:line:col location: {unlocated[0][:300]}"
    return ("ok", "") if outcome.exit_code == 0 else ("user-error", outcome.stderr.splitlines()[0][:300])


# ============================================================================ driver inputs

_PROJECT_PASSES = (
    "ll-verify",
    "ll-lower",
    "ll-linearize-encodings",
    "ll-to-simt",
    "ll-lower-apply",
    "ll-explain-conversions",
    "ll-verify{check-launch=false}",
    "ll-verify{max-errors=1}",
)
_UPSTREAM_PASSES = ("canonicalize", "cse", "symbol-dce", "reconcile-unrealized-casts")
_CHIPS = ("sm_80", "sm_90", "sm_100", "sm_120", "sm_75", "sm_30", "sm_20", "sm_99", "sm_1000")
_AMD_CHIPS = ("gfx942", "gfx90a", "gfx1100", "gfx942", "gfx9", "sm_90")
_INTERESTING_NUMBERS = (
    "0",
    "1",
    "2",
    "3",
    "7",
    "-1",
    "31",
    "33",
    "64",
    "4096",
    "16384",
    "65536",
    "2147483648",
    "4294967296",
    "1099511627776",
    "9223372036854775807",
    "18446744073709551616",
)
_TYPES = (
    "f16",
    "f32",
    "bf16",
    "f64",
    "i1",
    "i8",
    "i16",
    "i32",
    "i64",
    "f80",
    "index",
    "f8E4M3FN",
    "i3",
    "tf32",
    "complex<f32>",
    "vector<2xf32>",
    "none",
)
_ENCODINGS = (
    "blocked",
    "slice",
    "linear",
    "swizzled_shared",
    "nvmma_shared",
    "shared_linear",
    "nvidia_mma",
    "dot_op",
    "amd_mfma",
    "amd_wmma",
    "padded_shared",
    "bloked",
    "Blocked",
    "",
)
_KEYS = (
    "sizePerThread",
    "threadsPerWarp",
    "warpsPerCTA",
    "order",
    "sizePerWarp",
    "CTAsPerCGA",
    "dim",
    "parent",
    "register",
    "lane",
    "warp",
    "block",
    "offset",
    "versionMajor",
    "instrShape",
    "opIdx",
    "kWidth",
    "vec",
    "perPhase",
    "maxPhase",
    "swizzlingByteWidth",
    "transposed",
    "elementBitWidth",
)
_SNIPPETS = (
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    "<",
    ">",
    ",",
    "=",
    ":",
    '"',
    "#",
    "%",
    "@",
    "x",
    "?",
    "-",
    "//",
    "!ttg.memdesc<16x16xf16, #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>, "
    "#ttg.shared_memory>",
    "tensor<",
    "memref<",
    "vector<",
    '"ttg.convert_layout"',
    '"ll.apply"',
    "module {",
    "}",
    "func.func @g() {\n  return\n}\n",
    "\n// -----\n",
    "\0",
    "\\",
    "\u00e9",
)


def load_seeds(directories: list[Path], pattern: str = "*.mlir") -> list[str]:
    """The `// -----`-separated chunks of every ``pattern`` file under ``directories``, without RUN lines."""
    chunks: list[str] = []
    for directory in directories:
        for path in sorted(directory.rglob(pattern)):
            text = "\n".join(line for line in path.read_text().splitlines() if "RUN:" not in line)
            chunks.extend(chunk.strip() + "\n" for chunk in re.split(r"^// -----$", text, flags=re.M) if chunk.strip())
    return chunks


def _replace_random_match(rng: random.Random, text: str, pattern: str, replacement: str) -> str:
    matches = list(re.finditer(pattern, text))
    if not matches:
        return text
    match = rng.choice(matches)
    return text[: match.start()] + replacement + text[match.end() :]


def _mutate_number(rng, text, seeds):
    return _replace_random_match(rng, text, r"(?<![\w.])\d+(?![\w.])", rng.choice(_INTERESTING_NUMBERS))


def _mutate_type(rng, text, seeds):
    return _replace_random_match(rng, text, r"\b(f16|f32|bf16|i1|i8|i16|i32|i64|index)\b", rng.choice(_TYPES))


def _mutate_encoding_name(rng, text, seeds):
    return _replace_random_match(rng, text, r"(?<=#ttg\.)\w+", rng.choice(_ENCODINGS))


def _mutate_key(rng, text, seeds):
    return _replace_random_match(rng, text, r"\b[a-zA-Z]+(?= = )", rng.choice(_KEYS))


def _mutate_list(rng, text, seeds):
    """Grammar-aware: grow, shrink or empty a bracketed integer list."""
    values = [rng.choice(_INTERESTING_NUMBERS[:9]) for _ in range(rng.randrange(0, 5))]
    return _replace_random_match(rng, text, r"\[[\d, ]*\]", "[" + ", ".join(values) + "]")


def _mutate_shape(rng, text, seeds):
    dims = "x".join(
        rng.choice(("1", "2", "16", "64", "16384", "2147483648", "1099511627776", "?", "0"))
        for _ in range(rng.randrange(1, 4))
    )
    return _replace_random_match(rng, text, r"(?<=<)(\d+x)+", dims + "x")


def _delete_line(rng, text, seeds):
    lines = text.split("\n")
    del lines[rng.randrange(len(lines))]
    return "\n".join(lines)


def _duplicate_line(rng, text, seeds):
    lines = text.split("\n")
    index = rng.randrange(len(lines))
    lines.insert(index, lines[index])
    return "\n".join(lines)


def _swap_lines(rng, text, seeds):
    lines = text.split("\n")
    first, second = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[first], lines[second] = lines[second], lines[first]
    return "\n".join(lines)


def _insert_snippet(rng, text, seeds):
    position = rng.randrange(len(text) + 1)
    return text[:position] + rng.choice(_SNIPPETS) + text[position:]


def _delete_span(rng, text, seeds):
    start = rng.randrange(len(text) + 1)
    return text[:start] + text[start + rng.randrange(1, 40) :]


def _truncate(rng, text, seeds):
    return text[: rng.randrange(len(text) + 1)]


def _splice(rng, text, seeds):
    return text + ("\n// -----\n" if rng.random() < 0.5 else "\n") + rng.choice(seeds)


def _deep_nesting(rng, text, seeds):
    depth = rng.choice((200, 300, 1000, 5000, 10000))
    if rng.random() < 0.5:
        return "module {" * depth + "\n" + text + "}" * depth
    return _replace_random_match(rng, text, r"\[[\d, ]*\]", "[" * depth + "1" + "]" * depth)


MUTATORS = (
    _mutate_number,
    _mutate_number,
    _mutate_type,
    _mutate_encoding_name,
    _mutate_key,
    _mutate_list,
    _mutate_list,
    _mutate_shape,
    _delete_line,
    _duplicate_line,
    _swap_lines,
    _insert_snippet,
    _delete_span,
    _truncate,
    _splice,
    _deep_nesting,
)


def mutate(rng: random.Random, seeds: list[str]) -> str:
    """One seed with 1-4 mutations (deep nesting at most once)."""
    text = rng.choice(seeds)
    for _ in range(rng.choice((1, 1, 2, 3, 4))):
        mutator = rng.choice(MUTATORS)
        if mutator is _deep_nesting and len(text) > 20_000:
            continue
        text = mutator(rng, text, seeds) or "\n"
    return text


def _random_pipeline(rng: random.Random) -> str:
    if rng.random() < 0.02:  # anchors nested past the limit, or just inside it
        depth = rng.choice((255, 300, 3000))
        return "func.func(" * depth + rng.choice(_PROJECT_PASSES) + ")" * depth
    passes = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        name = rng.choice(_PROJECT_PASSES + _UPSTREAM_PASSES)
        passes.append(f"func.func({name})" if rng.random() < 0.2 else name)
    return f"builtin.module({', '.join(passes)})"


def driver_case(rng: random.Random, seeds: list[str]) -> Case:
    argv = ["-p", _random_pipeline(rng)]
    if rng.random() < 0.3:
        argv.append("--split-input-file")
    emit = rng.random()
    if emit < 0.05:  # the ROCDL path, with a known or an unknown AMD chip
        flag = "--emit-amdgcn" if emit < 0.015 else "--emit-rocdl-llvm"
        argv += ["-p", "builtin.module(ll-lower)", flag, f"--amdgcn-chip={rng.choice(_AMD_CHIPS)}"]
    elif emit < 0.15:
        argv += ["-p", "builtin.module(ll-lower)", "--emit-ptx", f"--ptx-chip={rng.choice(_CHIPS)}"]
    if rng.random() < 0.1:
        argv.append("--mlir-print-op-generic")
    return Case("driver", tuple(argv), mutate(rng, seeds))


# ============================================================================ draw and report inputs

_VALID_SHAPES = ("64x64", "16", "32x32", "1x1", "128x16", "16x16x2")
_MALFORMED_SHAPES = ("0x4", "3x4", "x", "", "-4", "64x")
_HUGE_SHAPES = ("2147483648x2", "1099511627776x1099511627776", "16384x16384", "x".join(["4"] * 17))
_SHAPES = _VALID_SHAPES + _MALFORMED_SHAPES + _HUGE_SHAPES
_COLOR_BY = ("lane", "warp", "register", "block", "thread", "chunk", "bank", "phase", "vector", "rainbow", "")
_BITWIDTHS = ("8", "16", "32", "64", "0", "-1", "7", "1024", "x")
_WIDTHS = ("0", "-5", "1", "12", "80", "100000")


def _encoding_text(rng: random.Random, seeds: list[str]) -> str:
    """An encoding of the seeds, mutated 0-2 times, or a bad value."""
    encodings = [match for seed in seeds for match in re.findall(r"#ttg\.\w+<\{[^\n]*?\}>", seed)]
    if not encodings or rng.random() < 0.1:
        return rng.choice(("", "#ttg.blocked", "#", "[[", "#ttg.linear<{}>", "#ttg.slice<{dim = 0, parent = #b}>"))
    text = rng.choice(encodings)
    for _ in range(rng.choice((0, 1, 1, 2))):
        text = rng.choice(MUTATORS[:8])(rng, text, seeds)
    return text


def _draw_options(rng: random.Random) -> list[str]:
    options: list[str] = []
    for flag, values, chance in (
        ("--shape", _SHAPES, 0.7),
        ("--color-by", _COLOR_BY, 0.3),
        ("--bitwidth", _BITWIDTHS, 0.3),
        ("--width", _WIDTHS, 0.2),
        ("--kind", ("load", "store", "both"), 0.1),
    ):
        if rng.random() < chance:
            options.append(f"{flag}={rng.choice(values)}")
    if rng.random() < 0.2:
        options.append("--no-color")
    if rng.random() < 0.15:
        options += ["-o", "{tmp}/picture." + rng.choice(("svg", "png", "txt", "html", ""))]
    return options


def draw_case(rng: random.Random, seeds: list[str], ttgir_seeds: list[str]) -> Case:
    """A linear-layout-draw run: one encoding, a conversion, an access, or a TTGIR line."""
    choice = rng.random()
    if choice < 0.15 and ttgir_seeds:
        text = mutate(rng, ttgir_seeds)
        line = rng.choice((str(rng.randrange(1, text.count("\n") + 2)), "0", "-1", "100000", "x"))
        return Case("draw", ("--ttgir", "{input}", "--line", line, *_draw_options(rng)[:1]), text)
    if choice < 0.35:
        argv = ["--src", _encoding_text(rng, seeds), "--dst", _encoding_text(rng, seeds)]
    else:
        argv = [_encoding_text(rng, seeds)]
        if rng.random() < 0.2:
            argv += ["--access", _encoding_text(rng, seeds)]
    return Case("draw", tuple(argv + _draw_options(rng)))


def report_case(rng: random.Random, ttgir_seeds: list[str]) -> Case:
    """A linear-layout-report run on mutated TTGIR read from stdin."""
    argv = ["-"]
    if rng.random() < 0.3:
        argv.append("--json")
    if rng.random() < 0.1:
        argv += ["--html", "{tmp}/report.html"]
    return Case("report", tuple(argv), mutate(rng, ttgir_seeds))


# ============================================================================ API inputs

_BAD_VALUES = (
    "None",
    "1.5",
    "-1",
    "0",
    "3",
    "True",
    "'x'",
    "''",
    "b'x'",
    "[]",
    "{}",
    "()",
    "object()",
    "np.float32(2)",
    "np.array([1.0])",
    "np.array([True])",
    "2**40",
    "2**64",
    "2**200",
    "[[1]]",
    "[1, 2]",
    "['a', 'b']",
    "{'i': 1}",
    "float('nan')",
    "float('inf')",
    "np.int64(4)",
    "deep(3000)",
    "{'i': deep(3000)}",
    "{'i': [deep(2000)]}",
)
_GOOD_LAYOUTS = (
    "LinearLayout.identity_1d(4, 'i', 'o')",
    "LinearLayout.from_bases({'i': [[1], [2]]}, ['o'])",
    "LinearLayout.empty()",
    "LinearLayout.zeros_1d(4, 'i', 'o')",
)


def _value(rng: random.Random) -> str:
    return rng.choice(_BAD_VALUES + _GOOD_LAYOUTS + ("4", "'i'", "['o']", "[4]", "{'i': [[1]]}"))


# Every public method of LinearLayout (and `*`), so that a new method is fuzzed without a new entry.
_LAYOUT_METHODS = tuple(
    sorted(name for name in dir(LinearLayout) if not name.startswith("_") and callable(getattr(LinearLayout, name)))
) + ("__mul__",)
# Hardware layouts for the mutators that need real dimension names.
_HW_LAYOUTS = (
    "LinearLayout.from_bases([('register', [[1, 0]]), ('lane', [[0, 1], [2, 0]]), ('warp', [[0, 2]]), "
    "('block', [])], ['dim0', 'dim1'])",
    "LinearLayout.from_bases([('offset', [[1, 0], [0, 1]]), ('block', [])], ['dim0', 'dim1'])",
)
_NAMES = ("'register'", "'lane'", "'warp'", "'block'", "'offset'", "'dim0'", "'dim1'", "'nope'", "''")
_INDICES = (
    "0",
    "1",
    "3",
    "-1",
    "4",
    "2**40",
    "-(2**70)",
    "np.int8(-1)",
    "np.uint64(2**63)",
    "np.int64(2)",
    "True",
    "1.0",
    "np.array([0, 1])",
    "np.array([-1, 2])",
    "np.array([0, 2**40])",
    "np.array([], dtype=np.int64)",
    "np.array([[0, 1], [1, 0]])",
    "np.array([1.5])",
    "np.array(2)",
    "np.array([2**63], dtype=np.uint64)",
)
_ENCODING_VALUES = (
    "BlockedLayout((1, 4), (8, 4), (2, 1), (1, 0))",
    "NVMMADistributedLayout((2, 0), (4, 1), (16, 8))",
    "DotOperandLayout(0, NVMMADistributedLayout((2, 0), (4, 1), (16, 8)), 2)",
    "SwizzledSharedLayout(2, 1, 4, (1, 0))",
    "NVMMASharedLayout(128, 16)",
)
# The public functions and the concrete encoding classes, read from their modules (not a hand list).
_API_FUNCTIONS = (
    *_builders.__all__,
    "format_hardware_view",
    "format_tensor_view",
    "verify_module_sizes",
    "collect_aliases",
    "to_gluon",
    "bank_conflicts",
    *(
        name
        for name in _encodings.__all__
        if isinstance(cls := getattr(_encodings, name), type)
        and issubclass(cls, (_encodings.DistributedLayout, _encodings.SharedLayout))
        and cls not in (_encodings.DistributedLayout, _encodings.SharedLayout)
    ),
)


def _argument(rng: random.Random) -> str:
    """A value for any argument: wrong types, edge numbers, names, layouts, encodings, shapes."""
    pool = rng.choice((_BAD_VALUES, _GOOD_LAYOUTS, _HW_LAYOUTS, _NAMES, _INDICES, _ENCODING_VALUES, _SHAPE_VALUES))
    return rng.choice(pool)


_SHAPE_VALUES = (
    "[32, 32]",
    "(16, 16)",
    "[64, 1048576]",
    "[2**20, 2**20]",
    "{'dim0': 4, 'dim1': 4}",
    "{'dim0': 2.0}",
    "{0: 4}",
    "[4, -4]",
    "frozenset({1, 2})",
    "np.array([16, 16])",
    "np.array(4)",
)


def _api_layout_call(rng: random.Random) -> str:
    layout = rng.choice(_GOOD_LAYOUTS + _HW_LAYOUTS)
    method = rng.choice(_LAYOUT_METHODS)
    arguments = ", ".join(_argument(rng) for _ in range(rng.choice((0, 1, 1, 2, 2, 3))))
    return f"{layout}.{method}({arguments})"


def _api_apply_call(rng: random.Random) -> str:
    """``apply`` on a hardware layout: every input given (in range, out of range, negative, scalar or
    array, wrong types), a key missing, an extra or non-string key."""
    values = {name: rng.choice(_INDICES) for name in ("'register'", "'lane'", "'warp'", "'block'")}
    mutation = rng.random()
    if mutation < 0.15:
        values.pop(rng.choice(list(values)))
    elif mutation < 0.3:
        values[rng.choice(("None", "1", "'extra'", "('lane',)", "b'lane'"))] = rng.choice(_INDICES)
    items = ", ".join(f"{key}: {value}" for key, value in values.items())
    return f"{_HW_LAYOUTS[0]}.apply({{{items}}})"


def _api_function_call(rng: random.Random) -> str:
    """A module-level function or an encoding's constructor, with drawn arguments (some by keyword)."""
    function = rng.choice(_API_FUNCTIONS)
    arguments = [_argument(rng) for _ in range(rng.choice((0, 1, 2, 3, 4)))]
    if arguments and rng.random() < 0.3:
        arguments[-1] = (
            f"{rng.choice(('shape', 'layout', 'order', 'rank', 'bitwidth', 'kind', 'nope'))}={arguments[-1]}"
        )
    return f"{function}({', '.join(arguments)})"


def _api_encoding_method_call(rng: random.Random) -> str:
    encoding = rng.choice(_ENCODING_VALUES)
    method = rng.choice(("to_linear_layout", "bases", "format_tensor_view", "format_hardware_view"))
    return f"{encoding}.{method}({_argument(rng)})"


def _api_builder_call(rng: random.Random) -> str:
    builder = rng.choice(("from_bases", "identity_1d", "strided_1d", "zeros_1d"))
    arguments = ", ".join(_value(rng) for _ in range(rng.choice((1, 2, 3, 4))))
    return f"LinearLayout.{builder}({arguments})"


def _api_encoding_call(rng: random.Random, seeds: list[str]) -> str:
    encodings = [match for seed in seeds for match in re.findall(r"#ttg\.\w+<\{[^\n]*?\}>", seed)]
    if encodings and rng.random() < 0.8:
        text = rng.choice(encodings)
        for _ in range(rng.choice((0, 1, 2))):
            text = rng.choice(MUTATORS[:8])(rng, text, seeds)
        text = repr(text)
    else:
        text = rng.choice(_BAD_VALUES)
    shape = rng.choice(
        (
            "[32, 32]",
            "[16]",
            "[64, 64, 2]",
            "[2**40, 2**40]",
            "[0, 4]",
            "[3, 4]",
            "None",
            "'x'",
            "[1.5, 2]",
            "[16384, 64]",
        )
    )
    call = rng.choice(
        (
            "parse_encoding({t})",
            "to_linear_layout({t}, {s})",
            "to_linear_layout(parse_encoding({t}), {s})",
            "plan_conversion(parse_encoding({t}), parse_encoding({t}), {s})",
            "plan_conversion({l}, {l})",
            "plan_conversion({l}, {v}, {s})",
        )
    )
    return call.format(t=text, s=shape, l=rng.choice(_GOOD_LAYOUTS), v=_value(rng))


def api_case(rng: random.Random, seeds: list[str], kernels: list[fuzz_ttgir.Kernel] | None = None) -> Case:
    choice = rng.random()
    if kernels and rng.random() < 0.1:
        expression = fuzz_ttgir.kernel_api_expression(rng, kernels)
    elif choice < 0.25:
        expression = _api_layout_call(rng)
    elif choice < 0.4:
        expression = _api_builder_call(rng)
    elif choice < 0.55:
        expression = _api_apply_call(rng)
    elif choice < 0.75:
        expression = _api_function_call(rng)
    elif choice < 0.85:
        expression = _api_encoding_method_call(rng)
    else:
        expression = _api_encoding_call(rng, seeds)
    return Case("api", expression=expression)


def generate_cases(
    seed: int,
    count: int,
    seeds: list[str],
    api_share: float = 0.3,
    *,
    ttgir_seeds: list[str] | None = None,
    tools_share: float = 0.2,
    kernels: list[fuzz_ttgir.Kernel] | None = None,
    kernel_share: float = 0.0,
) -> Iterator[Case]:
    """``count`` cases, reproducible from ``seed``: ``api_share`` API cases, ``kernel_share``
    mutated Triton kernels (``fuzz_ttgir``, only with ``kernels``), ``tools_share`` draw/report
    cases (report cases only with ``ttgir_seeds``), the rest driver cases."""
    rng = random.Random(seed)
    ttgir = ttgir_seeds or []
    for _ in range(count):
        choice = rng.random()
        if choice < api_share:
            yield api_case(rng, seeds, kernels)
        elif kernels and choice < api_share + kernel_share:
            yield fuzz_ttgir.kernel_case(rng, kernels, Case)  # type: ignore[misc]
        elif choice < api_share + kernel_share + tools_share:
            yield report_case(rng, ttgir) if ttgir and rng.random() < 0.4 else draw_case(rng, seeds, ttgir)
        else:
            yield driver_case(rng, seeds)


# ============================================================================ the worker (one subprocess per batch)


@contextlib.contextmanager
def _captured_fds() -> Iterator[list[str]]:
    """Capture fds 1 and 2 (C++ output included); the captured stderr lands in the yielded list."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    result: list[str] = []
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            yield result
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            err.seek(0)
            result.append(err.read().decode("utf-8", "replace"))


#: The console scripts' ``main`` functions, by case kind.
_MAINS = {
    "driver": opt.main,
    "draw": draw.main,
    "report": report.main,
    "ttgir-lower": opt.main,
    "ttgir-ptx": opt.main,
    "ttgir-roundtrip": opt.main,
    "ttgir-report": report.main,
}


def _run_tool(case: Case) -> Outcome:
    """A console script's ``main`` on the case, as the shell would run it: stdin from the case,
    ``{input}`` (and ``{input.ttgir}``) a file holding it, ``{tmp}`` a fresh folder; an escaping
    exception is printed as the traceback the user would see, ``SystemExit`` is the exit code.
    Then the ``-o`` file is checked (:func:`_output_problem`)."""
    stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(case.stdin.encode("utf-8", "surrogatepass")))
    try:
        with tempfile.TemporaryDirectory(prefix="ll-fuzz-") as folder:
            for name in ("input", "input.ttgir"):
                (Path(folder) / name).write_text(case.stdin, encoding="utf-8", errors="surrogatepass")
            argv = [
                arg.replace("{input.ttgir}", f"{folder}/input.ttgir").replace("{input}", f"{folder}/input")
                for arg in case.argv
            ]
            argv = [arg.replace("{tmp}", folder) for arg in argv]
            with _captured_fds() as stderr, open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
                code = _call_main(_MAINS[case.kind], argv)
                problem = _output_problem(case, argv, code)
        return Outcome(code, stderr[0], output_problem=problem)
    finally:
        sys.stdin = stdin


def _output_problem(case: Case, argv: list[str], code: int | None) -> str:
    """What is wrong with the ``-o`` file: written although the run failed, or (a TTGIR round
    trip) not a fixed point: reading the output and writing it again must give the same text."""
    if "-o" not in argv[:-1] or case.kind == "driver":  # no -o, or one without its value (a usage error)
        return ""
    output = Path(argv[argv.index("-o") + 1])
    if code != 0:
        return f"exit code {code}, but the output file was written" if output.exists() else ""
    if case.kind != "ttgir-roundtrip":
        return ""
    if not output.exists():
        return "exit code 0 without the output file"
    again = output.with_name("again.ttgir")
    code = _call_main(opt.main, [str(output), "-o", str(again)])
    if code != 0:
        return f"the round trip's output does not read back (exit code {code})"
    if again.read_text() != output.read_text():
        return "the round trip's output, read and written again, changes"
    return ""


def _call_main(main, argv: list[str]) -> int | None:
    try:
        return main(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) or exit_.code is None else 1
    except Exception:  # what the user would see: a traceback (classified as one)
        traceback.print_exc()
        return 1


def _api_namespace() -> dict:
    package = sys.modules[__package__.rpartition(".")[0]]  # linear_layout: its public API
    namespace = {name: getattr(package, name) for name in _PUBLIC_NAMES}
    namespace.update({name: getattr(_encodings, name) for name in _encodings.__all__})
    namespace.update({name: getattr(_builders, name) for name in _builders.__all__})
    namespace.update({"np": np, "deep": _deep})
    namespace.update(fuzz_ttgir.kernel_api_namespace())
    return namespace


def _deep(depth: int) -> list:
    """A list nested ``depth`` levels deep (too deep to write as a literal)."""
    value: list = [1]
    for _ in range(depth):
        value = [value]
    return value


def _run_api(case: Case, namespace: dict) -> Outcome:
    try:
        with _captured_fds() as stderr:
            try:
                eval(case.expression, dict(namespace))  # the fuzzer's own generated expression
                exception, message, user_error = None, "", False
            except Exception as error:  # classified by the parent: only TypeError/ValueError are user errors
                exception, message = type(error).__name__, _message(error)
                user_error = isinstance(error, (*USER_ERROR_CLASSES, *fuzz_ttgir.KERNEL_API_ERRORS))
    except RecursionError:  # the expression itself nests too deeply to evaluate: not the API's fault
        return Outcome(None, "", None)
    return Outcome(None, stderr[0], exception, message, user_error)


def _message(error: Exception) -> str:
    try:
        return str(error)[:300]
    except RecursionError:
        return "(the message itself recursed too deeply)"


def _run_kernel(case: Case) -> Outcome:
    """A ``ttgir-run`` case (``fuzz_ttgir.run_kernel_case``); its outcome kind travels as the
    exception field, an exception as itself with the last lines of its traceback."""
    stem, seed = case.argv
    try:
        with _captured_fds() as stderr:
            kind, detail = fuzz_ttgir.run_kernel_case(stem, int(seed), case.stdin)
    except Exception as error:  # classified by the parent: any exception here is a bug
        frames = traceback.format_exc().strip().splitlines()
        return Outcome(None, "", type(error).__name__, " | ".join([_message(error), *frames[-3:-1]])[:400])
    return Outcome(None, stderr[0], None if kind == "ok" else kind, detail)


def _worker() -> None:
    """Read cases (JSON lines) from stdin; for each, print "start" then its outcome, flushed."""
    namespace = _api_namespace()
    out = os.fdopen(os.dup(1), "w")
    for line in sys.stdin:
        case = Case.from_json(line)
        out.write("start\n")
        out.flush()
        if case.kind == "api":
            outcome = _run_api(case, namespace)
        elif case.kind == "ttgir-run":
            outcome = _run_kernel(case)
        else:
            outcome = _run_tool(case)
        out.write(json.dumps(outcome.__dict__) + "\n")
        out.flush()


# ============================================================================ the parent


class _LineReader:
    """Lines from a worker's stdout with a timeout (unbuffered: no line hides in a Python buffer)."""

    def __init__(self, process: subprocess.Popen) -> None:
        assert process.stdout is not None
        self.fd = process.stdout.fileno()
        self.buffer = b""

    def read_line(self, timeout: float) -> str | None:
        """The next line, or None at end of file or after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self.fd, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    return None
                data = os.read(self.fd, 1 << 16)
                if not data:
                    return None
                self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()


def _start_worker() -> subprocess.Popen:
    environment = {**os.environ, "PYTHONFAULTHANDLER": ""}
    return subprocess.Popen(
        [sys.executable, "-m", "linear_layout.tools.fuzz", "--worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        bufsize=0,
        env=environment,
        preexec_fn=_no_core_dumps,
    )


def _no_core_dumps() -> None:
    """In the worker: an abort ends the process at once instead of writing a core file first."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _still_running(process: subprocess.Popen, grace: float = 2.0) -> bool:
    """Whether the worker still runs (a hang) rather than dying (a crash), after a short grace."""
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        return True
    return False


def _stop(process: subprocess.Popen) -> int | None:
    process.kill()
    return process.wait()


def _run_batch(batch: list[Case], timeout: float) -> list[Outcome]:
    """Outcomes of a batch; a crash or hang ends the batch early (the rest run in a new worker)."""
    process = _start_worker()
    reader = _LineReader(process)
    assert process.stdin is not None
    outcomes: list[Outcome] = []
    try:
        for case in batch:
            process.stdin.write((case.to_json() + "\n").encode())
            started = reader.read_line(timeout + 30)  # the first case also waits for the worker's imports
            result = reader.read_line(timeout) if started else None
            if not result:
                hung = _still_running(process)
                code = _stop(process)
                outcomes.append(Outcome(None, "", "hang" if hung else "crash", f"exit status {code}"))
                return outcomes
            data = json.loads(result)
            outcomes.append(Outcome(**data))
    except BrokenPipeError:
        outcomes.append(Outcome(None, "", "crash", f"exit status {process.wait()}"))
        return outcomes
    process.stdin.close()
    process.wait()
    return outcomes


def _classify_outcome(case: Case, outcome: Outcome) -> tuple[str, str]:
    if outcome.exception in ("crash", "hang") and outcome.exit_code is None and not outcome.stderr:
        return outcome.exception, outcome.message
    return classify(case, outcome)


def run_cases(
    cases: list[Case], *, timeout: float = 20.0, batch_size: int = 25, deadline: float | None = None
) -> FuzzReport:
    """Run every case (until ``deadline``, a ``time.monotonic()`` value) and classify the outcomes."""
    start = time.monotonic()
    counts: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    findings: list[Finding] = []
    index = 0
    while index < len(cases) and (deadline is None or time.monotonic() < deadline):
        batch = cases[index : index + batch_size]
        for case, outcome in zip(batch, _run_batch(batch, timeout)):
            kind, detail = _classify_outcome(case, outcome)
            counts[kind] += 1
            kinds[case.kind] += 1
            index += 1
            if kind in FINDING_KINDS:
                findings.append(Finding(kind, case, detail))
    return FuzzReport(index, time.monotonic() - start, dict(counts), tuple(findings), dict(kinds))


#: Corpus file suffix of each kind of case whose input is text with an ``// ARGS:`` header.
REPRODUCER_SUFFIXES = {
    "driver": ".mlir",
    "draw": ".draw",
    "report": ".report",
    **{kind: f".{kind}" for kind in fuzz_ttgir.KERNEL_KINDS},
}


def write_reproducer(directory: Path, number: int, finding: Finding) -> Path:
    """A corpus file: ``.mlir``/``.draw``/``.report`` (first line ``// ARGS: <json argv>``, the input
    after it) or ``.api`` (the expression)."""
    directory.mkdir(parents=True, exist_ok=True)
    if finding.case.kind in REPRODUCER_SUFFIXES:
        path = directory / f"{finding.kind}-{number:04d}{REPRODUCER_SUFFIXES[finding.case.kind]}"
        path.write_text(
            f"// ARGS: {json.dumps(list(finding.case.argv))}\n// FOUND: {finding.detail[:200]!r}\n"
            + finding.case.stdin,
            encoding="utf-8",
            errors="surrogatepass",
        )
    else:
        path = directory / f"{finding.kind}-{number:04d}.api"
        path.write_text(finding.case.expression + "\n")
    return path


def read_reproducer(path: Path) -> Case:
    """The case a corpus file holds (see :func:`write_reproducer`)."""
    text = path.read_text(encoding="utf-8", errors="surrogatepass")
    if path.suffix == ".api":
        return Case("api", expression=text.strip())
    header, _, rest = text.partition("\n")
    argv = json.loads(header.removeprefix("// ARGS: "))
    if rest.startswith("// FOUND:"):
        rest = rest.partition("\n")[2]
    kind = next(kind for kind, suffix in REPRODUCER_SUFFIXES.items() if suffix == path.suffix)
    return Case(kind, tuple(argv), rest)


# ============================================================================ command line


def _argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="linear-layout-fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=None, help="number of inputs (default 500 without --minutes)")
    parser.add_argument("--minutes", type=float, default=None, help="stop after this many minutes")
    parser.add_argument("--seed", type=int, default=0, help="random seed (the run is reproducible)")
    parser.add_argument(
        "--seeds",
        type=Path,
        action="append",
        default=None,
        help="folder of seed .mlir files (default: tests/lit and examples)",
    )
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds before a case counts as a hang")
    parser.add_argument("--batch-size", type=int, default=25, help="cases per worker process")
    parser.add_argument("--api-share", type=float, default=0.3, help="fraction of API cases")
    parser.add_argument(
        "--tools-share", type=float, default=0.2, help="fraction of linear-layout-draw and -report cases"
    )
    parser.add_argument(
        "--kernel-share",
        type=float,
        default=0.2,
        help="fraction of mutated Triton kernels (tests/kernel_corpus/ttgir, tests/ttgir_corpus)",
    )
    parser.add_argument("--out", type=Path, default=Path("fuzz-findings"), help="folder for reproducers")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _argument_parser().parse_args(argv)
    if args.worker:
        _worker()
        return 0
    seeds = load_seeds(args.seeds or [ROOT / "tests" / "lit", ROOT / "examples"])
    if not seeds:
        print("linear-layout-fuzz: error: no seed .mlir files found", file=sys.stderr)
        return 1
    count = args.count if args.count is not None else (10**9 if args.minutes else 500)
    deadline = time.monotonic() + args.minutes * 60 if args.minutes else None
    ttgir_seeds = load_seeds([ROOT / "tests" / "ttgir_corpus"], "*.ttgir")
    cases = generate_cases(
        args.seed,
        count,
        seeds,
        args.api_share,
        ttgir_seeds=ttgir_seeds,
        tools_share=args.tools_share,
        kernels=fuzz_ttgir.load_kernels(),
        kernel_share=args.kernel_share,
    )
    report = _run_in_chunks(cases, args, deadline)
    for number, finding in enumerate(report.findings):
        path = write_reproducer(args.out, number, finding)
        print(f"{finding.kind}: {path}: {finding.detail.splitlines()[0] if finding.detail else ''}"[:300])
    print(report.summary())
    print(report.kinds_summary())
    return 1 if report.findings else 0


def _run_in_chunks(cases: Iterator[Case], args, deadline: float | None) -> FuzzReport:
    """Generate and run 500 cases at a time (a long run never holds all its inputs), printing progress."""
    total = FuzzReport(0, 0.0, {})
    while deadline is None or time.monotonic() < deadline:
        chunk = [case for _, case in zip(range(500), cases)]
        if not chunk:
            break
        report = run_cases(chunk, timeout=args.timeout, batch_size=args.batch_size, deadline=deadline)
        total = FuzzReport(
            total.inputs + report.inputs,
            total.seconds + report.seconds,
            dict(Counter(total.outcomes) + Counter(report.outcomes)),
            total.findings + report.findings,
            dict(Counter(total.by_kind) + Counter(report.by_kind)),
        )
        print(f"progress: {total.summary()}", file=sys.stderr, flush=True)
    return total


if __name__ == "__main__":
    sys.exit(main())
