"""Pass options are parsed from their real type hints (`typing.get_type_hints`), `T | None` included,
and `emit_ptx` is the one PTX path of the tool and the tests."""

from __future__ import annotations

import dataclasses
import re

import pytest
from mlir import ir

from linear_layout.core.targets import TargetError
from linear_layout.ir import load_dialects
from linear_layout.passes import Pass, PipelineError, build_pass_manager, emit_ptx
from linear_layout.passes.ptx import PtxError


@dataclasses.dataclass(frozen=True)
class _Options(Pass):
    argument = "test-options"
    summary = "options of every supported type"

    limit: int | None = None
    name: str = "x"
    strict: bool = False
    ratio: bool | None = None

    def apply(self, op: ir.Operation) -> None:
        """Nothing to do."""


@pytest.mark.parametrize("text, expected", [
    ("", _Options()),
    ("limit=3", _Options(limit=3)),
    ("limit=0x10", _Options(limit=16)),
    ("limit=none", _Options(limit=None)),
    ("name='y' strict=true ratio=false", _Options(name="y", strict=True, ratio=False)),
    ("ratio=none strict=0", _Options(ratio=None, strict=False)),
])
def test_options_follow_the_type_hints(text, expected):
    assert _Options.from_options(text) == expected


@pytest.mark.parametrize("text, message", [
    ("limit=many", "bad value 'many' for option 'limit' of pass 'test-options' (expected int or none)"),
    ("strict=maybe", "bad value 'maybe' for option 'strict' of pass 'test-options' (expected bool)"),
    ("strict=none", "bad value 'none' for option 'strict' of pass 'test-options' (expected bool)"),
    ("bogus=1", "unknown option 'bogus' for pass 'test-options' (options: limit, name, strict, ratio)"),
])
def test_bad_options_are_one_line_pipeline_errors(text, message):
    with pytest.raises(PipelineError) as raised:
        _Options.from_options(text)
    assert str(raised.value) == message


LOWERED_COPY = """#blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
module attributes {"ttg.num-warps" = 1 : i32} {
  func.func @copy(%in: memref<128xf32>, %out: memref<128xf32>) {
    %x = "ll.load"(%in) : (memref<128xf32>) -> tensor<128xf32, #blocked>
    "ll.store"(%x, %out) : (tensor<128xf32, #blocked>, memref<128xf32>) -> ()
    return
  }
}
"""


def _lowered(context: ir.Context) -> ir.Module:
    module = ir.Module.parse(LOWERED_COPY)
    build_pass_manager("ll-lower", context).run(module.operation)
    return module


def test_emit_ptx_compiles_a_lowered_module():
    with ir.Context() as context:
        load_dialects(context)
        ptx = emit_ptx(_lowered(context), "sm_80")
    assert ".target sm_80" in ptx and ".version 7.0" in ptx  # the lowest PTX version sm_80 needs
    assert "ld.global.v4.b32" in ptx and "st.global.v4.b32" in ptx


@pytest.mark.parametrize("chip, features, error, message", [
    ("sm_80", None, PtxError, "the module has no gpu.module (lower it first, e.g. with ll-lower)"),
    ("sm_999", None, TargetError, "sm_999"),
    ("sm_90", "+ptx60", TargetError, "too old"),
])
def test_emit_ptx_refuses_what_it_cannot_compile(chip, features, error, message):
    with ir.Context() as context:
        load_dialects(context)
        module = _lowered(context) if error is not PtxError else ir.Module.parse(LOWERED_COPY)
        with pytest.raises(error, match=re.escape(message)):
            emit_ptx(module, chip, features)
