"""The `math` ops: elementwise float functions and `math.absi`.

Ops: absf absi ceil floor exp exp2 log log2 sqrt rsqrt tanh sin cos fma.
"""

from __future__ import annotations

import numpy as np

from ..elements import result_elem
from ..machine import float_op, handles, register


def _fma(a, b, c):
    return a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)


_FLOAT_OPS = {
    "math.absf": np.abs,
    "math.ceil": np.ceil,
    "math.floor": np.floor,
    "math.exp": np.exp,
    "math.exp2": np.exp2,
    "math.log": np.log,
    "math.log2": np.log2,
    "math.sqrt": np.sqrt,
    "math.rsqrt": lambda x: 1 / np.sqrt(x),
    "math.tanh": np.tanh,
    "math.sin": np.sin,
    "math.cos": np.cos,
    "math.fma": _fma,
}


@handles("math.absi")
def _absi(ex, op):
    (x,) = ex.operands(op)
    elem = result_elem(op)
    return [elem.wrap(np.abs(elem.signed(x)).astype(np.uint64))]


for _name, _function in _FLOAT_OPS.items():
    register(_name, float_op(_function))
