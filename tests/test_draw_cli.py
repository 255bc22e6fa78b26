"""linear-layout-draw: outputs by extension, the terminal picture, and one-line errors (exit 1)."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from linear_layout import bank_conflicts, plan_conversion
from linear_layout.encodings import SharedLayout, collect_aliases
from linear_layout.tools.draw import main
from linear_layout.tools.kernel_line import kernel_lines, line_at, read_kernel_line

BLOCKED = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
TRANSPOSED = "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>"
SWIZZLED = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
SVG = "{http://www.w3.org/2000/svg}"


def titles(path) -> list[str]:
    root = ET.parse(path).getroot()
    return [r.find(f"{SVG}title").text for r in root.iter(f"{SVG}rect") if r.get("class") == "cell"]


def test_svg_png_and_text_outputs(tmp_path):
    svg = tmp_path / "out.svg"
    assert main([BLOCKED, "--shape", "32x32", "--color-by", "lane", "-o", str(svg)]) == 0
    found = titles(svg)
    assert len(found) == 1024 and found[0] == "(0, 0) T0 r0 lane 0 warp 0" and found[5] == "(0, 5) T1 r1 lane 1 warp 0"
    png = tmp_path / "out.png"
    assert main([BLOCKED, "--shape", "32x32", "-o", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    txt = tmp_path / "out.txt"
    assert main(["--src", BLOCKED, "--dst", TRANSPOSED, "--shape", "32x32", "--bitwidth", "16", "-o", str(txt)]) == 0
    text = txt.read_text()
    assert "convert_layout 32x32 x 16-bit: packed" in text and "store total over all warps" in text


def test_terminal_output(capsys):
    assert main([BLOCKED, "--shape", "64x64", "--width", "60", "--no-color"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert max(len(line) for line in out.splitlines()) <= 60
    assert "0=warp 0" in out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_colour_only_on_a_terminal_without_no_color(capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    # captured standard output is not a terminal: plain text unless --color always
    assert main([BLOCKED, "--shape", "32x32", "--width", "100"]) == 0
    assert "\x1b" not in capsys.readouterr().out
    assert main([BLOCKED, "--shape", "32x32", "--width", "100", "--color", "always"]) == 0
    assert "\x1b[48;2;" in capsys.readouterr().out
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert main([BLOCKED, "--shape", "32x32", "--width", "100"]) == 0
    assert "\x1b[48;2;" in terminal.getvalue()
    for argv in (["--color", "never"], ["--no-color"]):
        terminal.seek(0), terminal.truncate()
        assert main([BLOCKED, "--shape", "32x32", "--width", "100", *argv]) == 0
        assert terminal.getvalue() and "\x1b" not in terminal.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    terminal.seek(0), terminal.truncate()
    assert main([BLOCKED, "--shape", "32x32", "--width", "100"]) == 0
    assert "\x1b" not in terminal.getvalue()


def test_long_notes_wrap_instead_of_being_cut(capsys):
    assert main(["--src", BLOCKED, "--dst", TRANSPOSED, "--shape", "32x32", "--bitwidth", "16", "--width", "60"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 60 and "\u2026" not in out.split("0=warp 0")[1]
    plan_lines = out.split("plan: ", 1)[1].split("\nstore: ")[0].split("\n")
    assert len(plan_lines) > 1 and all(line.startswith("    ") for line in plan_lines[1:])


def test_shared_with_access(capsys):
    assert main([SWIZZLED, "--shape", "32x64", "--bitwidth", "16", "--access", TRANSPOSED, "--kind", "store",
                 "--no-color", "--width", "200"]) == 0
    out = capsys.readouterr().out
    assert "store: warp 0, instruction 1 of" in out and "bank_conflicts:" in out


@pytest.mark.parametrize("argv, message", [
    (["#ttg.blocked<{sizePerThread = [1]}>"], "encoding:"),
    ([BLOCKED, "--shape", "64xx"], "--shape: expected sizes separated by 'x'"),
    ([BLOCKED, "--shape", "48x64"], "power of two"),
    ([BLOCKED, "--shape", "2x2x2x2"], "has rank 4, but the layout has rank 2"),
    (["#ttg.blocked<{sizePerThread = [1, 1, 1, 1], threadsPerWarp = [2, 2, 2, 4], warpsPerCTA = [1, 1, 1, 1], "
      "order = [3, 2, 1, 0]}>", "--shape", "2x2x2x4"], "rank 1 to 3"),
    ([BLOCKED, "--color-by", "bank"], "unknown color_by"),
    ([BLOCKED, "--access", BLOCKED], "--access applies to shared-memory encodings only"),
    ([BLOCKED, "-o", "picture.jpg"], "extension must be .svg, .png, .tex or .txt"),
    ([BLOCKED, "--color", "sometimes"], "--color: invalid choice"),
    ([BLOCKED, "--color", "always", "--no-color"], "--no-color contradicts --color always"),
    (["--src", BLOCKED], "needs both --src and --dst"),
    ([], "nothing to draw"),
    ([BLOCKED, "--unknown"], "unrecognized arguments: --unknown"),
    ([SWIZZLED, "--shape", "8x8", "--bitwidth", "12"], "bitwidth must be a power of two"),
    # Values that used to be accepted silently (found checking the CLI against the error contract):
    ([SWIZZLED, "--shape", "8x8", "--bitwidth", "0"], "bitwidth must be a power of two >= 8, got 0"),
    ([BLOCKED, "--bitwidth", "16"], "--bitwidth applies to shared-memory encodings and conversions only"),
    ([BLOCKED, "--kind", "store"], "--kind applies to the access of a shared-memory encoding (--access) only"),
    ([SWIZZLED, "--shape", "8x8", "--kind", "store"], "--kind applies to the access"),
    (["--src", BLOCKED, "--dst", BLOCKED, "--access", BLOCKED], "--access and --kind apply to a shared-memory"),
    ([BLOCKED, "--width", "0"], "--width must be a positive number of columns, got 0"),
    ([BLOCKED, "--shape", "2048x1024"], "drawing #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], "
                                        "warpsPerCTA = [4, 1], order = [1, 0]}> would enumerate 2097152 points, "
                                        "more than the limit of 2**20"),
    (["--src", BLOCKED, "--dst", "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], "
      "warpsPerCTA = [2, 1], order = [1, 0]}>", "--shape", "32x32"], "different numbers of warps"),
])
def test_bad_input_is_one_line_and_exit_1(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("linear-layout-draw: error: ")
    assert message in err
    assert "Traceback" not in err
    assert not list(tmp_path.iterdir())


def test_cannot_write_output(capsys, tmp_path):
    assert main([BLOCKED, "--shape", "32x32", "-o", str(tmp_path / "missing" / "p.svg")]) == 1
    assert re.match(r"linear-layout-draw: error: cannot write .*p\.svg", capsys.readouterr().err)


def test_console_script_runs():
    result = subprocess.run([sys.executable, "-m", "linear_layout.tools.draw", BLOCKED, "--shape", "8x16",
                             "--no-color", "--width", "80"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("#ttg.blocked<")


# ---------------------------------------------------------------- --ttgir FILE --line N

CORPUS = Path(__file__).resolve().parent / "ttgir_corpus"


def first_line(path: Path, op: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if f"= {op} " in line or
                f" {op} %" in line)


KERNELS = sorted(path.name for path in CORPUS.glob("*.ttgir") if "ttg.convert_layout" in path.read_text())


@pytest.mark.parametrize("kernel", KERNELS)
def test_ttgir_convert_layout_line(kernel, tmp_path):
    """The first convert_layout of every corpus kernel that has one (NVIDIA and AMD, 32 and 64 lanes)."""
    path = CORPUS / kernel
    number = first_line(path, "ttg.convert_layout")
    line = read_kernel_line(path.read_text(), number)
    out = tmp_path / "line.txt"
    assert main(["--ttgir", str(path), "--line", str(number), "-o", str(out)]) == 0
    text = out.read_text()
    assert text.startswith(f"{path}:{number} ttg.convert_layout: convert_layout {'x'.join(map(str, line.shape))}")
    lanes = line.distributed.to_linear_layout(line.shape).get_in_dim_size("lane")
    plan = plan_conversion(line.distributed, line.other, line.shape, line.bitwidth, threads_per_warp=lanes)
    assert text.splitlines()[0].endswith(f": {plan.strategy}")
    if plan.strategy.uses_shared_memory:
        assert f"plan: store {plan.shared.store.wavefronts} wavefront(s), load {plan.shared.load.wavefronts}" in text
        assert f"store total over all warps and instructions: {plan.shared.store.wavefronts} wavefront(s)" in text


def test_every_drawable_corpus_line_reads_or_fails_cleanly():
    """Lines without a tensor (an empty local_alloc) are the only lines that cannot be drawn
    (#ttg.amd_rotating_shared, in the gfx files, is read as any other encoding)."""
    read = 0
    for path in sorted(CORPUS.glob("*.ttgir")):
        text = path.read_text()
        lines, aliases = text.splitlines(), collect_aliases(text)
        for number in kernel_lines(text):
            try:
                line_at(lines, number, aliases)
                read += 1
            except ValueError as error:
                assert "with two typed layouts" in str(error), (path, error)
    assert read >= 100


def test_ttgir_local_load_line_states_bank_conflicts(capsys):
    path = CORPUS / "matmul_f16.sm80.ttgir"
    number = first_line(path, "ttg.local_load")
    line = read_kernel_line(path.read_text(), number)
    assert line.op == "ttg.local_load" and isinstance(line.other, SharedLayout)
    assert main(["--ttgir", str(path), "--line", str(number), "--no-color", "--width", "120"]) == 0
    out = capsys.readouterr().out
    counted = bank_conflicts(line.distributed, line.other, line.bitwidth, line.shape, kind="load")
    assert f"load total over all warps and instructions: {counted.wavefronts} wavefront(s)" in out


@pytest.mark.parametrize("argv, message", [
    (["--line", "3"], "--line needs --ttgir"),
    (["--ttgir", "kernel.ttgir"], "--ttgir takes --line N"),
    (["--ttgir", "missing.ttgir", "--line", "1"], "cannot read 'missing.ttgir'"),
    (["--ttgir", "kernel.ttgir", "--line", "1"], "kernel.ttgir: line 1 holds no ttg.convert_layout"),
    (["--ttgir", "kernel.ttgir", "--line", "100000"], "line 100000 is outside the file"),
    (["--ttgir", "broken.ttgir", "--line", "1"], "broken.ttgir: "),
])
def test_ttgir_errors(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = (CORPUS / "matmul_f16.sm80.ttgir").read_text()
    (tmp_path / "kernel.ttgir").write_text(text)
    (tmp_path / "broken.ttgir").write_text(text[: len(text) // 2])
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("linear-layout-draw: error: ") and message in err
