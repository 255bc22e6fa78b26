"""linear-layout-draw: outputs by extension, the terminal picture, and one-line errors (exit 1)."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from linear_layout.tools.draw import main

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
    assert "convert_layout 32x32 x 16-bit: shared" in text and "store total over all warps" in text


def test_terminal_output(capsys):
    assert main([BLOCKED, "--shape", "64x64", "--width", "60", "--no-color"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert max(len(line) for line in out.splitlines()) <= 60
    assert "0=warp 0" in out


def test_terminal_colour_follows_no_color(capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert main([BLOCKED, "--shape", "32x32", "--width", "100"]) == 0
    assert "\x1b[48;2;" in capsys.readouterr().out
    monkeypatch.setenv("NO_COLOR", "1")
    assert main([BLOCKED, "--shape", "32x32", "--width", "100"]) == 0
    assert "\x1b" not in capsys.readouterr().out


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
    ([BLOCKED, "-o", "picture.jpg"], "extension must be .svg, .png or .txt"),
    (["--src", BLOCKED], "needs both --src and --dst"),
    ([], "nothing to draw"),
    ([BLOCKED, "--unknown"], "unrecognized arguments: --unknown"),
    ([SWIZZLED, "--shape", "8x8", "--bitwidth", "12"], "bitwidth must be a power of two"),
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
