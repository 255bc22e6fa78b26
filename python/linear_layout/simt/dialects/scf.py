"""The `scf` ops: `scf.if` and `scf.for` under the active-thread mask.

Ops: for (iter_args, signed or ``unsigned`` compare) if while condition yield.
"""

from __future__ import annotations

import numpy as np

from ..elements import elem_of
from ..errors import UndefinedBehaviorError
from ..machine import handles, terminator


@handles("scf.if")
def _scf_if(ex, op):
    cond = ex.get(op.operands[0]) != 0
    then_mask, else_mask = ex.active & cond, ex.active & ~cond
    then_region, else_region = op.regions[0], op.regions[1]
    then_values = ex.run_masked(then_region, then_mask) if then_mask.any() else None
    else_values = None
    if len(else_region.blocks) and else_mask.any():
        else_values = ex.run_masked(else_region, else_mask)
    if not len(op.results):
        return []
    if then_values is None:
        return else_values
    if else_values is None:
        return then_values
    return [
        np.where(cond.reshape(cond.shape + (1,) * (t.ndim - 1)), t, e) if isinstance(t, np.ndarray) else t
        for t, e in zip(then_values, else_values)
    ]


@handles("scf.for")
def _scf_for(ex, op):
    lower, upper, step, *carried = ex.operands(op)
    elem = elem_of(op.operands[0].type)
    if "unsignedCmp" in op.attributes:
        compare = np.less
    else:

        def compare(a, b):
            return elem.signed(a) < elem.signed(b)

    body = op.regions[0]
    iv = lower
    running = ex.active
    while True:
        running = running & compare(iv, upper)
        if not running.any():
            return carried
        if (running & (elem.signed(step) <= 0)).any():
            raise UndefinedBehaviorError("scf.for step must be positive")
        yielded = ex.run_masked(body, running, [iv, *carried])
        carried = [
            np.where(running.reshape((-1,) + (1,) * (y.ndim - 1)), y, c) if isinstance(y, np.ndarray) else y
            for y, c in zip(yielded, carried)
        ]
        iv = np.where(running, elem.wrap(elem.unsigned(iv) + elem.unsigned(step)), iv)


def _where(mask: np.ndarray, new: list, old: list) -> list:
    """Per thread: `new` where `mask`, else `old` (values other than arrays: `new`)."""
    return [
        np.where(mask.reshape((-1,) + (1,) * (n.ndim - 1)), n, o) if isinstance(n, np.ndarray) else n
        for n, o in zip(new, old)
    ]


@handles("scf.while")
def _scf_while(ex, op):
    """The `before` region on the carried values; the threads whose `scf.condition` is false
    leave with its other operands as results, the others run `after` and go round again."""
    carried = ex.operands(op)
    results = None
    running = ex.active
    while True:
        cond, *passed = ex.run_masked(op.regions[0], running, carried)
        going = running & (np.asarray(cond) != 0)
        results = passed if results is None else _where(running & ~going, passed, results)
        running = going
        if not running.any():
            return results
        carried = _where(running, ex.run_masked(op.regions[1], running, passed), carried)


terminator("scf.yield", "scf.condition")
