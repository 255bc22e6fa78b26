"""Python exceptions inside MLIR callbacks (issue 20, item 3), one test per class.

MLIR turns an exception raised in a walk callback or a rewrite pattern into a `RuntimeError`
whose message is the whole traceback. Our walks (`linear_layout.ir.walk.walk`) and pattern
callbacks (`SimtPattern.add_to`) keep the original exception and the op it was raised at, and the
passes report it (`linear_layout.passes.diagnostics`):

- a bad type or attribute (an `MLIRError` or a `ValueError`) is one user-error line at the op;
- a bug (any other exception) is one `internal error: pass '...' failed:` line;
- `LINEAR_LAYOUT_DEBUG=1` adds the traceback.
"""

from __future__ import annotations

import pytest
from mlir import ir

from linear_layout.dialects import verifier
from linear_layout.ir import load_dialects
from linear_layout.ir.walk import op_location, op_name, walk
from linear_layout.patterns.kernel import KernelBuilder
from linear_layout.tools import opt, report

#: The issue's example: a memdesc whose memory space is an integer, which `memdesc_of` cannot read.
BAD_TYPE = """#s = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  func.func @f() {
    %0 = "ttg.local_alloc"() : () -> !ttg.memdesc<[32], 5 : i64, #s, #ttg.shared_memory, "mutable">
    return
  }
}
"""

BLOCKED = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"
KERNEL = f"""module attributes {{"ttg.num-warps" = 4 : i32}} {{
  func.func @copy(%in: memref<128xf32>, %out: memref<128xf32>) {{
    %x = "ll.load"(%in) : (memref<128xf32>) -> tensor<128xf32, {BLOCKED}>
    "ll.store"(%x, %out) : (tensor<128xf32, {BLOCKED}>, memref<128xf32>) -> ()
    return
  }}
}}
"""

PASSES = ["ll-verify", "ll-linearize-encodings", "ll-to-simt", "ll-lower", "ll-explain-conversions", "ll-lower-apply"]


def _opt(tmp_path, capsys, text: str, *args: str) -> tuple[int, list[str]]:
    path = tmp_path / "input.mlir"
    path.write_text(text)
    code = opt.main([str(path), *args])
    return code, capsys.readouterr().err.splitlines()


@pytest.fixture(autouse=True)
def _no_debug(monkeypatch):
    monkeypatch.delenv("LINEAR_LAYOUT_DEBUG", raising=False)


@pytest.mark.parametrize("pass_name", PASSES)
def test_a_bad_type_is_one_user_error_at_its_op(tmp_path, capsys, pass_name):
    code, lines = _opt(tmp_path, capsys, BAD_TYPE, "-p", f"builtin.module({pass_name})")
    assert code == 1
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{tmp_path / 'input.mlir'}:4:10: error: 'ttg.local_alloc': Unable to parse type")
    assert "Traceback" not in lines[0] and "internal error" not in lines[0] and "failed:" not in lines[0]


def test_the_report_reads_a_bad_type_as_one_user_error(tmp_path, capsys):
    path = tmp_path / "input.mlir"
    path.write_text(BAD_TYPE)
    assert report.main([str(path)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and ":4:5: error: 'ttg.local_alloc'" in lines[0] and "Traceback" not in lines[0], lines


def _planted(error: Exception):
    def broken(*args, **kwargs):
        raise error

    return broken


def test_a_bug_in_a_walk_callback_is_one_internal_error_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(verifier._Verifier, "check_op", _planted(KeyError("planted")))
    code, lines = _opt(tmp_path, capsys, KERNEL)
    assert code == 1
    assert lines == [
        f"{tmp_path / 'input.mlir'}:1:1: error: internal error: pass 'll-verify' failed: KeyError: 'planted' "
        "(set LINEAR_LAYOUT_DEBUG=1 for a traceback)"
    ], lines


def test_a_bug_in_a_rewrite_pattern_is_one_internal_error_line_with_its_own_type(tmp_path, capsys, monkeypatch):
    """Not `RuntimeError: Exception raised in callback: Traceback ...`: the pattern's exception."""
    monkeypatch.setattr(KernelBuilder, "apply", _planted(IndexError("planted")))
    code, lines = _opt(tmp_path, capsys, KERNEL, "-p", "builtin.module(ll-lower)")
    assert code == 1 and len(lines) == 1, lines
    assert "error: internal error: pass 'll-to-simt' failed: IndexError: planted (set LINEAR_LAYOUT_DEBUG" in lines[0]


def test_a_bad_value_in_a_rewrite_pattern_is_one_user_error_at_its_op(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(KernelBuilder, "apply", _planted(ValueError("planted bad attribute")))
    code, lines = _opt(tmp_path, capsys, KERNEL, "-p", "builtin.module(ll-to-simt)")
    assert code == 1
    assert lines == [f"{tmp_path / 'input.mlir'}:3:10: error: 'll.load': planted bad attribute"], lines


def test_debug_shows_the_traceback(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LINEAR_LAYOUT_DEBUG", "1")
    monkeypatch.setattr(verifier._Verifier, "check_op", _planted(KeyError("planted")))
    code, lines = _opt(tmp_path, capsys, KERNEL)
    assert code == 1
    assert lines[0] == "Traceback (most recent call last):", lines
    assert "KeyError: 'planted'" in lines
    assert lines[-1].endswith("error: internal error: pass 'll-verify' failed: KeyError: 'planted'"), lines[-1]


def test_walk_re_raises_the_callbacks_exception_at_its_op():
    with ir.Context() as context:
        load_dialects(context)
        module = ir.Module.parse(KERNEL)
        seen: list[str] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            seen.append(op.name)
            if op.name == "ll.store":
                raise ZeroDivisionError("planted")
            return ir.WalkResult.ADVANCE

        with pytest.raises(ZeroDivisionError, match="planted") as raised:
            walk(module, visit)
        assert seen[-1] == "ll.store" and "func.return" not in seen  # the walk stopped there
        assert op_name(raised.value) == "ll.store"
        assert str(op_location(raised.value)) == 'loc("-":4:5)'
