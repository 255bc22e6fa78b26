"""Planning a `tt.dot` on the FMA path (pure: never imports ``mlir``).

Triton's FMA dot (``FMADotOpToLLVM``) keeps the whole K extent of its operands in every thread:
A in ``#ttg.dot_op<{opIdx = 0, parent = #blocked}>`` holds, for each row ``m`` of the result the
thread holds, every ``A[m, k]``; B likewise every ``B[k, n]``. Each result register ``r`` at
``(m, n)`` is then a chain ``c = fma(A[m, k], B[k, n], c)`` for ``k = 0, 1, ..., K - 1`` in the
thread's own registers, with no data exchange. :func:`plan_fma_dot` finds, from the three linear
layouts, which A and B registers each step of each chain reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.layout import LinearLayout
from .layouts import PlannerError

__all__ = ["FmaDotPlan", "plan_fma_dot"]


@dataclass(frozen=True)
class FmaDotPlan:
    """Per result register ``r``: ``a_registers[r][k]`` and ``b_registers[r][k]`` are the A and B
    registers that step ``k`` of its chain multiplies (the same in every thread)."""

    a_registers: tuple[tuple[int, ...], ...]
    b_registers: tuple[tuple[int, ...], ...]

    @property
    def k(self) -> int:
        return len(self.a_registers[0]) if self.a_registers else 0


def _by_thread(layout: LinearLayout) -> np.ndarray:
    """(threads, registers, 2): the (row, column) of each register of each thread (lanes, warps
    and blocks flattened into one thread index, register the fastest input)."""
    table = layout.tabulate()
    registers = layout.get_in_dim_size("register")
    return table.reshape(-1, registers, table.shape[1])


def _register_at(layout: LinearLayout, rows: int, cols: int) -> np.ndarray:
    """(threads, rows, cols): the register of each thread holding each element, -1 where none."""
    places = _by_thread(layout)
    threads, registers, _ = places.shape
    found = np.full((threads, rows, cols), -1, dtype=np.int64)
    thread = np.repeat(np.arange(threads), registers)
    register = np.tile(np.arange(registers), threads)
    found[thread, places[:, :, 0].ravel(), places[:, :, 1].ravel()] = register
    return found


def _uniform_over_threads(needed: np.ndarray, operand: str) -> np.ndarray:
    """``needed[0]`` when every thread uses the same registers; PlannerError otherwise."""
    if (needed < 0).any():
        raise PlannerError(f"the FMA dot needs elements of {operand} that the thread does not hold")
    if (needed != needed[0]).any():
        raise PlannerError(f"the FMA dot's {operand} registers differ between threads")
    return needed[0]


def plan_fma_dot(a: LinearLayout, b: LinearLayout, c: LinearLayout) -> FmaDotPlan:
    """The registers of each FMA chain of ``C += A B`` (A: M x K, B: K x N, C: M x N; each layout's
    outputs are ``(dim0, dim1)``, its inputs register, lane, warp, block, of one launch).

    Requires: every thread holds, for each of its C elements ``(m, n)``, all of row ``m`` of A and
    column ``n`` of B, in the same registers in every thread (Triton's dot operands of a
    blocked parent); PlannerError otherwise.
    Postcondition: ``A[a_registers[r][k]]`` is ``A[m, k]`` and ``B[b_registers[r][k]]`` is
    ``B[k, n]`` in every thread, for C register ``r`` at ``(m, n)``.
    """
    m, k = a.get_out_dim_size("dim0"), a.get_out_dim_size("dim1")
    n = b.get_out_dim_size("dim1")
    if b.get_out_dim_size("dim0") != k or c.get_out_dim_size("dim0") != m or c.get_out_dim_size("dim1") != n:
        raise PlannerError(f"the dot's shapes do not match: A {m}x{k}, B {b.get_out_dim_size('dim0')}x{n}, "
                           f"C {c.get_out_dim_size('dim0')}x{c.get_out_dim_size('dim1')}")
    a_at, b_at = _register_at(a, m, k), _register_at(b, k, n)
    places = _by_thread(c)
    threads = np.arange(places.shape[0])[:, None]
    a_needed = a_at[threads, places[:, :, 0]]  # (threads, C registers, K)
    b_needed = np.swapaxes(b_at, 1, 2)[threads, places[:, :, 1]]  # (threads, C registers, K)
    a_registers = _uniform_over_threads(a_needed, "A")
    b_registers = _uniform_over_threads(b_needed, "B")
    return FmaDotPlan(
        tuple(tuple(int(x) for x in row) for row in a_registers),
        tuple(tuple(int(x) for x in row) for row in b_registers),
    )
