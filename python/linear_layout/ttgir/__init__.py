"""Reading and writing TTGIR, Triton's GPU IR as `kernel.asm["ttgir"]` prints it.

    from linear_layout.ttgir import parse_ttgir, print_ttgir

    module = parse_ttgir(open("kernel.ttgir").read())   # an mlir.ir.Module
    text = print_ttgir(module)                           # Triton compiles this to the same PTX

`formats` holds the table of Triton op syntaxes; `syntax` the token-level structure of the text;
`types` the type spelling; `reader` and `writer` the two directions.
"""

from .formats import FORMATS, OpFormat
from .reader import TtgirError, check_target, name_loop_arguments, parse_ttgir, ttgir_context, ttgir_to_mlir
from .writer import mlir_to_ttgir, print_ttgir

__all__ = [
    "FORMATS",
    "OpFormat",
    "TtgirError",
    "check_target",
    "mlir_to_ttgir",
    "name_loop_arguments",
    "parse_ttgir",
    "print_ttgir",
    "ttgir_context",
    "ttgir_to_mlir",
]
