"""Planning a `tt.dot` on the FMA path (pure: never imports ``mlir``).

Triton's FMA dot (``FMADotOpToLLVM``) keeps the whole K extent of its operands in every thread:
A in ``#ttg.dot_op<{opIdx = 0, parent = #blocked}>`` holds, for each row ``m`` of the result the
thread holds, every ``A[m, k]``; B likewise every ``B[k, n]``. Each result register ``r`` at
``(m, n)`` is then a chain ``c = fma(A[m, k], B[k, n], c)`` for ``k = 0, 1, ..., K - 1`` in the
thread's own registers, with no data exchange. :func:`plan_fma_dot` finds, from the three linear
layouts, which A and B registers each step of each chain reads.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..core.hardware import WAVEFRONT_BYTES
from ..core.layout import LinearLayout
from .layouts import PlannerError
from .matrix import MatrixInstruction, MatrixSide, matrix_rows_cost

__all__ = [
    "MMA_TYPES",
    "DotCost",
    "FmaDotPlan",
    "MmaDotPlan",
    "MmaStep",
    "dot_cost",
    "plan_fma_dot",
    "plan_mma_dot",
    "plan_operand_ldmatrix",
]


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


def _dot_shape(a: LinearLayout, b: LinearLayout, c: LinearLayout) -> tuple[int, int, int]:
    """(M, K, N) of ``C = A B``: A M x K, B K x N, C M x N over (dim0, dim1); PlannerError for
    other ranks or shapes that do not match."""
    for name, layout in (("A", a), ("B", b), ("C", c)):
        if [dim for dim, _ in layout.out_dims] != ["dim0", "dim1"]:
            raise PlannerError(f"the dot's {name} is not a matrix over (dim0, dim1): {[d for d, _ in layout.out_dims]}")
    m, k = a.get_out_dim_size("dim0"), a.get_out_dim_size("dim1")
    n = b.get_out_dim_size("dim1")
    if b.get_out_dim_size("dim0") != k or c.get_out_dim_size("dim0") != m or c.get_out_dim_size("dim1") != n:
        raise PlannerError(
            f"the dot's shapes do not match: A {m}x{k}, B {b.get_out_dim_size('dim0')}x{n}, "
            f"C {c.get_out_dim_size('dim0')}x{c.get_out_dim_size('dim1')}"
        )
    return m, k, n


def plan_fma_dot(a: LinearLayout, b: LinearLayout, c: LinearLayout) -> FmaDotPlan:
    """The registers of each FMA chain of ``C += A B`` (A: M x K, B: K x N, C: M x N; each layout's
    outputs are ``(dim0, dim1)``, its inputs register, lane, warp, block, of one launch).

    Requires: every thread holds, for each of its C elements ``(m, n)``, all of row ``m`` of A and
    column ``n`` of B, in the same registers in every thread (Triton's dot operands of a
    blocked parent); PlannerError otherwise.
    Postcondition: ``A[a_registers[r][k]]`` is ``A[m, k]`` and ``B[b_registers[r][k]]`` is
    ``B[k, n]`` in every thread, for C register ``r`` at ``(m, n)``. Planned once per
    ``(a, b, c)``, a refusal too (every ``mma.sync`` dot asks for this plan first).
    """
    outcome = _fma_outcome(a, b, c)
    if isinstance(outcome, str):
        raise PlannerError(outcome)
    return outcome


@functools.lru_cache(maxsize=1024)
def _fma_outcome(a: LinearLayout, b: LinearLayout, c: LinearLayout) -> FmaDotPlan | str:
    """`plan_fma_dot`'s plan, or the message of its PlannerError (a string: immutable)."""
    try:
        return _plan_fma_dot(a, b, c)
    except PlannerError as error:
        return str(error)


def _plan_fma_dot(a: LinearLayout, b: LinearLayout, c: LinearLayout) -> FmaDotPlan:
    m, k, n = _dot_shape(a, b, c)
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


# ---- mma.sync (#ttg.nvidia_mma version 2)

#: multiplicand bits -> (k of one m16n8kK instruction, multiplicand elements per 32-bit register)
MMA_SHAPES = {16: (16, 2), 32: (8, 1), 8: (32, 4)}
_TILE_M, _TILE_N = 16, 8


@dataclass(frozen=True)
class MmaStep:
    """One ``mma.sync.m16n8kK``: per lane, ``a[r]`` (4 registers) and ``b[r]`` (2) are the operand
    registers packed into its 32-bit registers, ``per_register`` elements each; ``c`` (4) are the
    accumulator registers it reads and writes, fragment element ``i`` first."""

    a: tuple[tuple[int, ...], ...]
    b: tuple[tuple[int, ...], ...]
    c: tuple[int, ...]


@dataclass(frozen=True)
class MmaDotPlan:
    """The ``mma.sync`` instructions of one dot, in Triton's order (per output tile, K steps in
    order), and the instruction's ``k``."""

    steps: tuple[MmaStep, ...]
    k: int


def _fragment_offsets(lanes: np.ndarray, per_register: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Offsets inside one instruction's tiles, per lane (PTX ISA fragment figures; see
    simt/dialects/nvvm.py): A (lanes, 4, e, 2), B (lanes, 2, e, 2), C (lanes, 4, 2)."""
    group, in_group = lanes // 4, lanes % 4
    e = per_register
    a = np.zeros((len(lanes), 4, e, 2), np.int64)
    b = np.zeros((len(lanes), 2, e, 2), np.int64)
    for r in range(4):
        for j in range(e):
            a[:, r, j] = np.stack([group + 8 * (r % 2), e * in_group + j + 4 * e * (r // 2)], 1)
    for r in range(2):
        for j in range(e):
            b[:, r, j] = np.stack([e * in_group + j + 4 * e * r, group], 1)
    c = np.stack([np.stack([group + 8 * (i // 2), 2 * in_group + i % 2], 1) for i in range(4)], 1)
    return a, b, c


def _registers_of(at: np.ndarray, threads: np.ndarray, places: np.ndarray, operand: str) -> np.ndarray:
    """The register of each thread at ``places`` (threads, ..., 2), uniform over threads."""
    found = at[threads.reshape((-1,) + (1,) * (places.ndim - 2)), places[..., 0], places[..., 1]]
    return _uniform_over_threads(found, operand)


@functools.lru_cache(maxsize=1024)  # plans are immutable; a PlannerError is raised, never cached
def plan_mma_dot(
    a: LinearLayout, b: LinearLayout, c: LinearLayout, multiplicand_bits: int, threads_per_warp: int = 32
) -> MmaDotPlan:
    """The ``mma.sync`` steps of ``C += A B`` with A, B in ``#ttg.dot_op`` of ``#ttg.nvidia_mma``
    version 2 and C in the MMA layout (inputs register, lane, warp, block; outputs dim0, dim1).

    Each 16 x 8 tile of C that a warp holds at its lane 0 register ``r0`` (an aligned tile
    origin) is one chain of instructions over K in steps of the instruction's ``k``; each
    instruction's operand registers are found where every lane's fragment elements (PTX ISA
    figures) sit in that lane's registers.

    Requires: multiplicand_bits in 8, 16, 32 (i8, f16/bf16, tf32); every lane holds its fragment
    elements, in the same registers in every thread (PlannerError otherwise).
    Postcondition: for every step and every thread, register ``step.a[r][j]`` of A holds the element
    ``(row, k)`` that fragment register ``r``, element ``j`` of its lane is in the PTX ISA, likewise B
    and C.
    """
    if multiplicand_bits not in MMA_SHAPES:
        raise PlannerError(f"mma.sync multiplicands of {multiplicand_bits} bits: 8, 16 or 32 are supported")
    k_step, per_register = MMA_SHAPES[multiplicand_bits]
    m, k, n = _dot_shape(a, b, c)
    if k % k_step or m % _TILE_M or n % _TILE_N:
        raise PlannerError(f"a {m}x{k}x{n} dot is not made of m16n8k{k_step} tiles")
    a_at, b_at, c_at = _register_at(a, m, k), _register_at(b, k, n), _register_at(c, m, n)
    c_places = _by_thread(c)
    threads = np.arange(c_places.shape[0])
    lanes = threads % threads_per_warp
    first_lane = threads - lanes
    a_off, b_off, c_off = _fragment_offsets(lanes, per_register)
    origins = [
        r for r in range(c_places.shape[1]) if c_places[0, r, 0] % _TILE_M == 0 and c_places[0, r, 1] % _TILE_N == 0
    ]
    steps = []
    for r0 in origins:
        origin = c_places[first_lane, r0]  # (threads, 2): the tile's corner, for each thread's warp
        c_regs = _registers_of(c_at, threads, origin[:, None, :] + c_off, "C")
        for k0 in range(0, k, k_step):
            a_places = (
                a_off + np.array([0, k0]) + np.stack([origin[:, 0], np.zeros_like(origin[:, 0])], 1)[:, None, None]
            )
            b_places = (
                b_off + np.array([k0, 0]) + np.stack([np.zeros_like(origin[:, 1]), origin[:, 1]], 1)[:, None, None]
            )
            a_regs = _registers_of(a_at, threads, a_places, "A")
            b_regs = _registers_of(b_at, threads, b_places, "B")
            steps.append(
                MmaStep(
                    tuple(tuple(int(x) for x in row) for row in a_regs),
                    tuple(tuple(int(x) for x in row) for row in b_regs),
                    tuple(int(x) for x in c_regs),
                )
            )
    return MmaDotPlan(tuple(steps), k_step)


# ---- ldmatrix for a dot operand loaded from a fixed shared layout (ttg.local_load)

_ROW_BYTES = 16  # a row of an 8x8 b16 matrix
_WORD_BITS = 32  # each lane receives one 32-bit word per matrix


def _offsets(layout: LinearLayout, dim: str) -> list[int]:
    return [basis[0] for basis in dict(layout.bases).get(dim, ())]


@functools.lru_cache(maxsize=1024)  # sides are immutable
def plan_operand_ldmatrix(to_offset: LinearLayout, num_warps: int, element_bits: int = 16) -> MatrixSide | None:
    """The ``ldmatrix`` side (`planning.matrix.MatrixSide`: every lane addresses a row at
    ``address(lane, warp) ^ instruction.offset``) of a ``ttg.local_load`` of ``element_bits``-bit
    data (16; 32 and 8 as Triton loads tf32 and i8 A operands) whose element offsets are
    ``to_offset`` ((register, lane, warp[, block]) -> offset: the distributed layout composed with
    the inverse of the fixed shared layout), or None where they do not fit.

    Per the PTX ISA (see `planning.matrix`), ``ldmatrix .b16`` gives lane ``4 r + q`` word ``q`` of
    row ``r`` of each matrix, a row being 16 bytes, ``e = 32 / element_bits`` elements a word. Not
    transposed, the register bits inside a word step its elements (offsets ``1, .., e / 2``: one
    bit for 16-bit data, two for 8-bit, none for 32-bit) and lane bits 0, 1 the words
    (offsets ``e, 2 e``); ``.trans`` (16-bit only, as Triton) has lanes 2..4 step through the row
    (offsets ``1, 2, 4``) and one register bit and lanes 0, 1 address rows. Every other input
    must move by whole rows (multiples of ``4 e`` elements). Up to two more register bits select
    the matrices of one instruction (``x4``); the remaining registers are the instructions.

    Requires: ``to_offset`` over register, lane, warp (block of size 1), 32 lanes; element_bits
    in 8, 16, 32.
    Postcondition: loading each instruction's rows and unpacking its words puts every element in
    the register ``to_offset`` names for it (the interpreter's ldmatrix checks this end to end).
    """
    registers, lanes, warps = (_offsets(to_offset, dim) for dim in ("register", "lane", "warp"))
    if len(lanes) != 5 or _offsets(to_offset, "block") or element_bits not in (8, 16, 32):
        return None
    for trans in (False, True) if element_bits == 16 else (False,):
        plan = _ldmatrix_form(registers, lanes, warps, trans, to_offset.get_out_dim_size("offset"), element_bits)
        if plan is not None:
            return _costed(plan, num_warps, element_bits // 8)
    return None


def _costed(form: tuple, num_warps: int, element_bytes: int) -> MatrixSide:
    """The side with its wavefronts (one phase per matrix) and bytes, as `planning.matrix` counts them."""
    trans, num, address, instructions = form
    offsets = [ins.offset for ins in instructions]
    waves, ideal, moved = matrix_rows_cost(address, offsets, num, num_warps, element_bytes)
    return MatrixSide("ldmatrix", trans, num, address, tuple(instructions), waves, ideal, moved)


def _in_word(registers: list[int], per_word: int) -> list[int] | None:
    """The register bits stepping through a word's elements (offsets 1, 2, ..), or None."""
    steps = []
    for offset in (1 << k for k in range(per_word.bit_length() - 1)):
        if offset not in registers:
            return None
        steps.append(registers.index(offset))
    return steps


def _ldmatrix_form(
    registers: list[int], lanes: list[int], warps: list[int], trans: bool, offsets: int, element_bits: int = 16
) -> tuple | None:
    """(trans, num, address, instructions) when the offsets fit ``ldmatrix`` (``.trans``)."""
    per_word = _WORD_BITS // element_bits
    row_elements = _ROW_BYTES * 8 // element_bits
    if trans:  # contents (l2, l3, l4) = 1, 2, 4; rows (rho, l0, l1); 16-bit only
        if lanes[2:] != [1, 2, 4]:
            return None
        rho_candidates = [k for k, o in enumerate(registers) if o and o % row_elements == 0]
        if not rho_candidates:
            return None
        word = [rho_candidates[0]]
        rows = [registers[word[0]], lanes[0], lanes[1]]
    else:
        found = _in_word(registers, per_word)
        if found is None or lanes[:2] != [per_word, 2 * per_word]:
            return None
        word = found
        rows = lanes[2:]
    spare = [k for k, o in enumerate(registers) if k not in word and o % row_elements == 0]
    if any(o % row_elements for o in rows + warps) or len(spare) + len(word) != len(registers):
        return None
    matrix_bits = spare[:2]
    rest = spare[2:]
    matrix_offsets = [registers[k] for k in matrix_bits]
    address = LinearLayout.from_bases(
        [("lane", [[o] for o in rows + (matrix_offsets + [0, 0])[:2]]), ("warp", [[o] for o in warps])],
        ["offset"],
        [offsets],
        require_surjective=False,
    )
    num = 1 << len(matrix_bits)
    instructions = []
    for index in range(1 << len(rest)):
        base = sum(1 << rest[b] for b in range(len(rest)) if index >> b & 1)
        offset = 0
        for b in range(len(rest)):
            if index >> b & 1:
                offset ^= registers[rest[b]]
        words = []
        for i in range(num):
            matrix = base | sum(1 << matrix_bits[b] for b in range(len(matrix_bits)) if i >> b & 1)
            words.append(_word_registers(matrix, word))
        instructions.append(MatrixInstruction(0, tuple(words), offset))
    return trans, num, address, tuple(instructions)


def _word_registers(matrix: int, word: list[int]) -> tuple[int, ...]:
    """The registers of one word, its lowest element first: ``matrix`` with each combination of
    the in-word register bits ``word`` (bit ``b`` of the element index sets register bit ``word[b]``)."""
    return tuple(matrix | sum(1 << word[b] for b in range(len(word)) if j >> b & 1) for j in range(1 << len(word)))


# ---- the predicted cost of one dot (the report's row)

#: A/B element type (as MLIR prints it) -> (the PTX multiplicand type of mma.sync, its bits).
MMA_TYPES = {"f16": ("f16", 16), "bf16": ("bf16", 16), "f32": ("tf32", 32), "i8": ("s8", 8)}


@dataclass(frozen=True)
class DotCost:
    """The predicted cost of one ``tt.dot``: ``mma`` (``mma.sync`` per warp, of shape ``path``),
    ``fma`` (``fma`` per thread on the FMA path), ``ldmatrix`` (per warp, loading the operands
    that come from shared memory through ``ldmatrix``), the shared-memory ``wavefronts`` of those
    ldmatrix per CTA, their per-access minimum ``ideal`` and the bandwidth ``floor`` (distinct
    bytes / 128). Counts per warp are the instructions of the kernel's code, as in its PTX."""

    path: str  # "mma.sync m16n8k16" or "fma"
    mma: int = 0
    fma: int = 0
    ldmatrix: int = 0
    wavefronts: int = 0
    ideal: int = 0
    floor: int = 0

    @property
    def instructions(self) -> int:
        """The dot's matrix and FMA instructions of one warp: mma.sync + ldmatrix + fma."""
        return self.mma + self.ldmatrix + self.fma

    def summary(self) -> str:
        """One line: ``mma.sync m16n8k16: 8 mma, 3 ldmatrix per warp; wavefronts=24 (floor 24, ideal 24)``."""
        counts = f"{self.fma} fma per thread" if self.path == "fma" else f"{self.mma} mma"
        if self.path != "fma":
            counts += f", {self.ldmatrix} ldmatrix per warp"
        waves = f"wavefronts={self.wavefronts} (floor {self.floor}, ideal {self.ideal})" if self.ldmatrix else ""
        return f"{self.path}: {counts}; {self.instructions} instruction(s)" + (f"; {waves}" if waves else "")


def dot_cost(
    a: LinearLayout,
    b: LinearLayout,
    c: LinearLayout,
    element: str,
    threads_per_warp: int = 32,
    operand_loads: tuple[MatrixSide | None, ...] = (),
    mma: bool = True,
) -> DotCost | None:
    """The cost of ``C = A B + C`` with operand layouts ``a``, ``b`` and result ``c`` (as for
    :func:`plan_fma_dot`), multiplicands of type ``element`` (``f16``, ``bf16``, ``f32``, ``i8``),
    and ``operand_loads``: the ldmatrix sides (:func:`plan_operand_ldmatrix`) of the operands
    loaded from shared memory, None for the others. The path is the lowering's: FMA when every
    thread holds its operands along K, else ``mma.sync`` (``#ttg.nvidia_mma`` version 2), or None
    when ``mma`` is False (a target without mma.sync: AMD's MFMA/WMMA dots are not lowered).

    Requires: the layouts fit one of the two paths (PlannerError otherwise).
    Postcondition: ``mma`` and ``fma`` are the instructions the lowering emits per warp and per
    thread; ``ldmatrix``, ``wavefronts`` and ``floor`` sum over ``operand_loads``.

    >>> from linear_layout.core.layout import LinearLayout
    >>> one = LinearLayout.from_bases([("register", [[0, 1]]), ("lane", []), ("warp", []), ("block", [])],
    ...                               ["dim0", "dim1"], [1, 2])
    >>> column = LinearLayout.from_bases([("register", [[1, 0]]), ("lane", []), ("warp", []), ("block", [])],
    ...                                  ["dim0", "dim1"], [2, 1])
    >>> scalar = LinearLayout.from_bases([("register", []), ("lane", []), ("warp", []), ("block", [])],
    ...                                  ["dim0", "dim1"], [1, 1])
    >>> dot_cost(one, column, scalar, "f32").summary()
    'fma: 2 fma per thread; 2 instruction(s)'
    """
    loads = [side for side in operand_loads if side is not None]
    shared = {
        "ldmatrix": sum(len(side.instructions) for side in loads),
        "wavefronts": sum(side.wavefronts for side in loads),
        "ideal": sum(side.ideal_wavefronts for side in loads),
        "floor": sum(-(-side.bytes // WAVEFRONT_BYTES) for side in loads),
    }
    try:
        fma = plan_fma_dot(a, b, c)
        return DotCost("fma", fma=len(fma.a_registers) * fma.k)
    except PlannerError as fma_error:
        if not mma:
            return None
        if element not in MMA_TYPES:
            raise PlannerError(f"{fma_error}; no mma.sync for {element} operands") from None
    plan = plan_mma_dot(a, b, c, MMA_TYPES[element][1], threads_per_warp)
    return DotCost(f"mma.sync m16n8k{plan.k}", mma=len(plan.steps), **shared)
