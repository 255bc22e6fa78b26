"""One error contract for every console script (linear-layout-opt, -draw, -report; tools.cli.guarded_main):
a bug inside is one `internal error` line with exit code 1 (no traceback unless LINEAR_LAYOUT_DEBUG is
set), Ctrl-C exits 130, a closed pipe exits 1. Each script's bad-input classes are tested in its own file
(test_driver_errors.py, test_draw_cli.py, test_report.py) and fuzzed by test_fuzz.py."""

from __future__ import annotations

import pytest

from linear_layout.tools import draw, opt, report

BLOCKED = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
KERNEL = "tests/ttgir_corpus/layernorm.sm80.ttgir"

#: (module, its main, the function inside the run that the test breaks, arguments that reach it)
SCRIPTS = {
    "linear-layout-opt": (opt, "_read_input", ["-"]),
    "linear-layout-draw": (draw, "_picture", [BLOCKED]),
    "linear-layout-report": (report, "report_ttgir", [KERNEL]),
}


def _raise(error: BaseException):
    def broken(*args, **kwargs):
        raise error

    return broken


@pytest.mark.parametrize("prog", SCRIPTS)
def test_a_bug_is_one_internal_error_line(prog, monkeypatch, capsys):
    module, name, argv = SCRIPTS[prog]
    monkeypatch.delenv("LINEAR_LAYOUT_DEBUG", raising=False)
    monkeypatch.setattr(module, name, _raise(RuntimeError("a bug\nacross lines")))
    assert module.main(argv) == 1
    err = capsys.readouterr().err
    assert err == f"{prog}: internal error: RuntimeError: a bug across lines (set LINEAR_LAYOUT_DEBUG=1 for a traceback)\n"


@pytest.mark.parametrize("prog", SCRIPTS)
@pytest.mark.parametrize("error, code", [(KeyboardInterrupt(), 130), (BrokenPipeError(), 1)])
def test_interrupt_and_closed_pipe(prog, error, code, monkeypatch, capsys):
    module, name, argv = SCRIPTS[prog]
    monkeypatch.setattr(module, name, _raise(error))
    assert module.main(argv) == code
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("prog", SCRIPTS)
def test_debug_variable_gives_the_traceback(prog, monkeypatch):
    module, name, argv = SCRIPTS[prog]
    monkeypatch.setenv("LINEAR_LAYOUT_DEBUG", "1")
    monkeypatch.setattr(module, name, _raise(RuntimeError("a bug")))
    with pytest.raises(RuntimeError, match="a bug"):
        module.main(argv)
