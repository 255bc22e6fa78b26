"""This project's passes, registered by command-line name, and pipelines mixing them with
upstream MLIR passes.

    pm = build_pass_manager("builtin.module(ll-verify, canonicalize, func.func(cse))", context)
    pm.run(module.operation)

- `registry.py`: the passes by command-line name (`get_pass`, `pass_names`); each pass lives in
  its own module, named after its command-line name (`ll-verify` in `ll_verify.py`), and is
  imported only when used;
- `options.py`: a pass is a dataclass whose fields are its options, parsed by their type hints
  (`max_errors` is written `max-errors=...` on the command line);
- `base.py`: `Pass`, `Pipeline` (a named pipeline, `ll-lower`, stands for the passes it lists),
  `build_pass_manager`;
- `atomic.py`: the pass manager whose `run` leaves the module unchanged when a pass fails;
- `diagnostics.py`: one-line errors, user errors at their op, `internal error:` for bugs, and
  tracebacks with `LINEAR_LAYOUT_DEBUG=1`;
- `pipeline.py`: the textual pipeline parser;
- `ptx.py`: `emit_ptx`, the stock NVVM pipeline to PTX;
- `amdgcn.py`: `emit_amdgcn` and `emit_rocdl_llvm`, the stock ROCDL path to AMDGCN (LLVM IR without
  an AMDGPU back end).
"""

from __future__ import annotations

from .amdgcn import emit_amdgcn, emit_rocdl_llvm
from .atomic import PipelinePassManager
from .base import Pass, Pipeline, add_pipeline, build_pass_manager
from .pipeline import PipelineError, parse_pipeline
from .ptx import emit_ptx
from .registry import get_pass, pass_names

__all__ = [
    "Pass",
    "Pipeline",
    "PipelineError",
    "PipelinePassManager",
    "add_pipeline",
    "build_pass_manager",
    "emit_amdgcn",
    "emit_ptx",
    "emit_rocdl_llvm",
    "get_pass",
    "pass_names",
    "parse_pipeline",
]
