r"""A numpy interpreter for lowered SIMT kernels: runs a ``gpu.func`` for one block, in lockstep.

Lowerings are proven by running them. :func:`run_kernel` executes the per-thread program that the
lowering passes emit -- a ``gpu.func ... kernel`` written only in upstream dialects -- for every
thread of one block at once, and reports what the hardware would have paid in shared-memory
wavefronts, shuffles and barriers.

The package
===========
``simt/`` is the machine and one module per dialect. ``machine.py`` holds the machine (one block
of threads in lockstep, their values, workgroup memory with ``memory.py``'s buffers and race
tracking, ``banks.py``'s bank and sector model, barriers) and the handler table; each module of
``simt/dialects/`` (``arith``, ``math``, ``vector``, ``memref``, ``gpu``, ``scf``, ``llvm``,
``nvvm``, ``func``) registers the handlers of its dialect's ops with ``@handles``. A new op is a
handler in its dialect's module (listed in that module's docstring), and nothing else. Printed
attributes are read by ``linear_layout.ir.upstream``. This module is the entry point
(:func:`run_kernel`).

Execution model
===============
* **One launch, one block, lockstep.** The block has ``num_warps * threads_per_warp`` threads along
  ``x`` (``gpu.thread_id y/z`` are 0, ``gpu.block_dim y/z`` are 1). Every op is executed once for
  all threads, in program order, so all warps advance together.
* **Vectorised across threads.** Every SSA value is a numpy array whose leading axis is the
  thread: a scalar is shape ``(threads,)``, a ``vector<R x T>`` is ``(threads, R)`` and a
  ``vector<A x B x T>`` is ``(threads, A, B)``. Memrefs are the exception: they are uniform
  :class:`Buffer` objects shared by all threads.
* **Element types.** Integers (``i1`` .. ``i64``, ``index`` = 64 bits) are stored as *unsigned*
  bit patterns in the smallest numpy container that holds them and wrap modulo ``2**width`` after
  every op; signed ops reinterpret the bits. ``f16``/``f32``/``f64`` use the numpy type of the same
  name. ``bf16`` is stored as ``float32`` rounded to bf16 (nearest-even) after every op; a
  ``memref<..xbf16>`` argument is a ``float32`` numpy array.
* **Control flow.** ``scf.if`` and ``scf.for`` run under an *active-thread mask*. A branch or an
  iteration runs once for the threads that take it; memory ops and error checks ignore inactive
  threads, and results are merged with ``where``. A uniform branch therefore runs exactly like the
  hardware would; a divergent one runs both sides.
* **Memory.** Global memref arguments are the caller's numpy arrays, read and written in place.
  Workgroup memory (``gpu.func`` ``workgroup(...)`` attributions and ``memref.alloc`` in
  ``#gpu.address_space<workgroup>``) is fresh per block and starts as garbage (NaN, or the byte
  pattern 0xA5): reading an element no thread has written raises :class:`MemoryAccessError`.
  Out-of-bounds indices and accesses that break a promised ``alignment`` raise too.
* **Undefined behaviour is an error, poison is garbage.** Division by zero, shifts by the bit
  width or more, and a barrier or shuffle reached in divergent control flow raise
  :class:`UndefinedBehaviorError`. Poison *values* (an invalid shuffle lane, a ``-1`` shuffle mask
  entry) are filled with the garbage pattern so that using them shows up in the results.
  ``fptosi``/``fptoui`` saturate (NaN gives 0), as PTX's ``cvt.rzi`` does.
* **Closed op set.** Exactly the ops in :data:`SUPPORTED_OPS` run; any other op raises
  :class:`UnsupportedOp` naming it;
  each module of ``simt/dialects/`` lists the ops it runs in its docstring (``Ops:``).

  A ``gpu.shuffle`` lane whose source is outside ``[0, width)``, or whose own lane is, gets
  ``valid = false`` and a poison (garbage) value. Integer overflow flags (nsw/nuw) are ignored:
  results wrap.

Shared-memory bank model (NVIDIA, 32 banks x 4 bytes)
=====================================================
Each warp's access is accounted separately, per op execution (:class:`SharedAccess`).

1. **Split into hardware instructions.** A thread's access of ``n`` contiguous bytes (one
   ``vector`` row, or one scalar) is issued as instructions of ``w`` bytes: the largest power of
   two that is at most 16, at most the op's ``alignment`` attribute (the element size when there
   is none -- without it LLVM scalarises the access) and divides ``n``. A ``vector<8xf32>`` load
   with ``{alignment = 16}`` is two 128-bit instructions; without the attribute it is eight
   32-bit ones. (This matches the PTX of the stock ``gpu-lower-to-nvvm-pipeline``.)
2. **Phases.** An instruction is served in phases of ``128 / max(w, 4)`` threads: the whole warp
   for accesses of up to 32 bits, half-warps for 64-bit and quarter-warps for 128-bit accesses.
3. **Wavefronts.** Byte address ``a`` lies in 4-byte word ``a // 4`` and bank ``word % 32``. A
   phase costs ``max over banks of the number of distinct words it touches in that bank``
   (threads touching the same word share it: broadcast); a phase with no active thread costs 0.
4. **Ideal.** The conflict-free minimum of a phase is ``ceil(distinct words / 32)``;
   ``bank_conflicts = wavefronts - ideal_wavefronts``. This is the *per-access minimum*: it
   depends on the access width the kernel chose (a 2-byte access of 32 lanes moves 64 bytes in
   one wavefront).
5. **Bytes and the floor.** Each warp access also records the distinct bytes it moved
   (:attr:`SharedAccess.bytes`). A wavefront serves at most 128 bytes, so no kernel moving the
   same data can use fewer than the *bandwidth floor*
   ``ceil(stored bytes / 128) + ceil(loaded bytes / 128)`` (:attr:`Report.floor_wavefronts`),
   whatever its access widths or instructions.

Matrix instructions (PTX ISA ``ldmatrix``/``stmatrix .m8n8 .b16``)
===================================================================
A pointer is a per-thread byte address (``uint64``); workgroup buffers are laid out from address 0
in order of creation, each 128-byte aligned. ``nvvm.ldmatrix``/``nvvm.stmatrix`` with ``num``
matrices of 8x8 16-bit elements:

* lane ``8 i + r`` supplies the address of row ``r`` (16 contiguous, 16-byte aligned bytes) of
  matrix ``i``; lanes ``>= 8 num`` supply nothing (their operand is ignored);
* register ``i`` (a 32-bit word) of lane ``L`` holds row ``L / 4``, columns ``2 (L % 4)`` (low
  half) and ``2 (L % 4) + 1`` (high half) of matrix ``i``; with ``layout = col`` (``.trans``)
  the fragment is of the transposed matrix: rows ``2 (L % 4)``, ``2 (L % 4) + 1`` of column ``L / 4``;
* the whole warp must execute it (``.sync.aligned``): a warp split by divergence raises (a warp-uniform
  branch, e.g. a store predicate on the warp index, may skip it in whole warps);
* the rows of a matrix are served as one phase (8 addresses x 16 bytes, like a quarter-warp
  128-bit access): a matrix costs the maximum over banks of the distinct words its rows touch,
  one wavefront when conflict-free. ``bytes_per_thread`` is ``4 num`` and ``instruction_bytes`` 16.
  (A public Nsight measurement suggests the hardware can also merge the rows of different
  matrices of one instruction; on conflict-free accesses, the only ones the lowering emits, the
  two models agree.)

Workgroup memory is byte-addressed (``memory.py``): every workgroup allocation (a workgroup
attribution, a ``memref.alloc``) is placed at a 128-byte-aligned address, so banks are counted
from its start, and a ``memref.view`` of a 1-D ``i8`` workgroup buffer (the lowering's one
allocation) is a typed view of its bytes at the byte shift: views of different element types
alias, each sees what the others wrote, and the race tracking, per byte, sees their accesses as
accesses to the same bytes. Dynamic shared memory (``gpu.dynamic_shared_memory``) starts after
the static buffers, 128-byte aligned; each ``memref.view`` of it is an allocation at its byte
shift (a view at a shift that is not a multiple of 128 keeps its exact address). Two views of it
of the same shift and type are one buffer; views of it that overlap otherwise are not supported
(views of a view of it at offset 0, the lowering's form above 48 KiB, alias as above). Global accesses are counted as instructions and distinct 32-byte sectors per warp
(:class:`GlobalAccess`), with the same instruction split; each global argument starts at a
sector-aligned address.

Race detection
==============
Lockstep execution would hide a missing ``gpu.barrier``, so every workgroup byte remembers
which warps wrote it and which read it since the last barrier (a barrier clears that state). In
one barrier interval it is a race when

* **read-after-write**: a warp reads an element that another warp wrote, and it did not write
  the element itself;
* **write-after-read**: a warp writes an element that another warp read;
* **write-after-write**: a warp writes an element that another warp wrote, with a different
  value, or threads of one store write different values to one element. Equal values are benign:
  that is how broadcast layouts store their duplicates.

The bytes of an element are tracked one by one, so a write through one view and a read through
a view of another element type over the same bytes race as well.

Within one warp, a later op always sees an earlier one (the warp runs in lockstep), so only pairs
of different warps race. With ``on_race="raise"`` (the default) the first race raises
:class:`RaceError` (its ``race`` attribute is the :class:`Race`); with ``on_race="record"`` races are collected in :attr:`Report.races` and
execution goes on.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import mlir.ir as ir
import numpy as np

from . import dialects  # noqa: F401  (registers every op handler)
from .banks import bank_wavefronts as _wavefronts  # noqa: F401  (the name the bank-model tests use)
from .elements import elem_of, vector_shape
from .errors import KernelChoiceError, MemoryAccessError, RaceError, SimtError, UndefinedBehaviorError, UnsupportedOp
from .machine import HANDLERS, TERMINATORS, Launch, Machine
from .memory import GLOBAL_ARGUMENT_SPAN, GLOBAL_BASE_ADDRESS, Buffer, memory_space, memref_layout
from .report import GlobalAccess, Race, Report, SharedAccess

__all__ = [
    "Buffer",
    "GlobalAccess",
    "MemoryAccessError",
    "Race",
    "RaceError",
    "Report",
    "SharedAccess",
    "SimtError",
    "SUPPORTED_OPS",
    "UndefinedBehaviorError",
    "UnsupportedOp",
    "run_kernel",
    "simt_arrays",
]

#: Every op the interpreter executes; anything else raises :class:`UnsupportedOp`.
SUPPORTED_OPS: frozenset[str] = frozenset(HANDLERS) | frozenset(TERMINATORS)


def _find_kernel(root, kernel: str | None):
    """The gpu.func (or func.func) to run, from a module, gpu.module or function op."""
    op = root.operation if hasattr(root, "operation") else root
    if op.name in ("gpu.func", "func.func"):
        return op
    candidates = []

    def visit(container):
        for child in container.regions[0].blocks[0].operations:
            child = child.operation
            if child.name == "gpu.module":
                visit(child)
            elif child.name in ("gpu.func", "func.func"):
                candidates.append(child)

    visit(op)
    # gpu kernels win over func.func (a module may also hold host code that launches them)
    kernels = [f for f in candidates if "gpu.kernel" in f.attributes]
    kernels = kernels or [f for f in candidates if f.name == "func.func"]
    names = [f.attributes["sym_name"].value for f in kernels]
    if kernel is not None:
        kernels = [f for f, n in zip(kernels, names) if n == kernel]
        if not kernels:
            raise KernelChoiceError(f"no kernel named {kernel!r}; found {names}")
    elif len(kernels) != 1:
        raise KernelChoiceError(f"expected exactly one kernel, found {names}; pass kernel=<name>")
    return kernels[0]


def simt_arrays(args: Sequence) -> list:
    """`args` as the interpreter takes them: a copy of each numpy array, a bf16 array
    (`ml_dtypes.bfloat16`) as the float32 array of the same values (exact: the interpreter holds
    bf16 in float32, see the module docstring), anything else (scalars) as it is.

    Example: ``simt_arrays([np.ones(4, ml_dtypes.bfloat16), 3])`` -> ``[array([1., 1., 1., 1.],
    dtype=float32), 3]``."""
    return [_simt_array(arg) if isinstance(arg, np.ndarray) else arg for arg in args]


def _simt_array(array: np.ndarray) -> np.ndarray:
    return array.astype(np.float32) if array.dtype.name == "bfloat16" else array.copy()


def _triple(value, default: int) -> tuple[int, int, int]:
    if isinstance(value, (int, np.integer)):
        return (int(value), default, default)
    values = [int(v) for v in value]
    if len(values) > 3:
        raise ValueError(f"a grid position has at most 3 dimensions, got {values}")
    x, y, z = values + [default] * (3 - len(values))
    return (x, y, z)


def _bind_argument(index: int, block_arg: ir.BlockArgument, value, num_threads: int):
    """The interpreter value of one kernel argument: a Buffer over the caller's array for a
    memref, else a per-thread array (one value for all threads, or one per thread)."""
    t = block_arg.type
    name = f"argument #{index} ({block_arg.get_name()}: {t})"
    elem = elem_of(t)
    if not isinstance(t, ir.MemRefType):
        raw = np.asarray(value)
        raw = raw.astype(np.float64) if elem.is_float else raw.astype(np.int64).astype(np.uint64)
        return elem.wrap(np.broadcast_to(raw, (num_threads,) + vector_shape(t)))
    if memory_space(t) != "global":
        raise MemoryAccessError(f"{name}: kernel arguments must be global memrefs")
    if not isinstance(value, np.ndarray):
        raise MemoryAccessError(f"{name}: expected a numpy array, got {type(value).__name__}")
    kind_ok = value.dtype.kind in ("f" if elem.is_float else "iub")
    if not kind_ok or value.dtype.itemsize != elem.storage.itemsize:
        raise MemoryAccessError(f"{name}: numpy dtype {value.dtype} cannot hold {elem.name} (use {elem.storage})")
    if not value.flags.c_contiguous or not value.flags.writeable:
        raise MemoryAccessError(f"{name}: the array must be C-contiguous and writeable")
    dynamic = ir.ShapedType.get_dynamic_size()
    if len(t.shape) != value.ndim or any(s not in (d, dynamic) for s, d in zip(t.shape, value.shape)):
        raise MemoryAccessError(f"{name}: array shape {list(value.shape)} does not match")
    strides, offset = memref_layout(t, value.shape)
    flat = value.reshape(-1).view(elem.storage)  # a view: stores land in the caller's array
    if value.size and offset + sum((d - 1) * s for d, s in zip(value.shape, strides)) >= value.size:
        raise MemoryAccessError(f"{name}: the memref layout reaches beyond the array")
    base = GLOBAL_BASE_ADDRESS + index * GLOBAL_ARGUMENT_SPAN
    return Buffer(name, "global", elem, flat, tuple(value.shape), strides, offset, base_address=base)


def _positional(args: Sequence | Mapping, num_inputs: int) -> list:
    if not isinstance(args, Mapping):
        args = list(args)
        if len(args) != num_inputs:
            raise ValueError(f"kernel takes {num_inputs} arguments, got {len(args)}")
        return args
    by_position = {}
    for key, value in args.items():
        match = re.fullmatch(r"%?arg(\d+)", key) if isinstance(key, str) else None
        if isinstance(key, int):
            by_position[key] = value
        elif match is not None:
            by_position[int(match.group(1))] = value
        else:
            raise ValueError(f"argument key {key!r} is neither a position nor 'argN'")
    if sorted(by_position) != list(range(num_inputs)):
        raise ValueError(f"arguments given for positions {sorted(by_position)}, kernel takes {num_inputs}")
    return [by_position[i] for i in range(num_inputs)]


def run_kernel(
    module_or_func,
    args: Sequence | Mapping = (),
    *,
    num_warps: int | None = None,
    threads_per_warp: int | None = None,
    block_id: int | Sequence[int] | None = None,
    num_blocks: int | Sequence[int] = 1,
    kernel: str | None = None,
    on_race: str = "raise",
    check_uninitialized: bool = True,
) -> Report:
    """Run a lowered kernel for one block (or every block of the grid) and report its costs.

    ``module_or_func``: an ``ir.Module`` (or its text), a ``gpu.module``, or the ``gpu.func`` /
    ``func.func`` itself; ``kernel`` picks a kernel by name when there are several.
    ``args``: one value per function argument (workgroup attributions are not arguments), as a
    list or as a dict keyed by position or ``"argN"`` -- MLIR does not keep SSA names. Memref
    arguments are C-contiguous numpy arrays, updated in place; scalars are Python/numpy numbers.
    ``threads_per_warp`` defaults to the ``"ttg.threads-per-warp"`` of the nearest enclosing op that
    has one (a kernel lowered from a 64-lane module keeps it), else 32; ``num_warps`` defaults to
    ``known_block_size / threads_per_warp``. ``block_id`` runs that one
    block; by default every block of ``num_blocks`` runs, one after the other.
    ``on_race``: ``"raise"`` (:class:`RaceError`) or ``"record"`` (into :attr:`Report.races`).
    ``check_uninitialized``: raise on reads of workgroup memory that nothing wrote.
    """
    if on_race not in ("raise", "record"):
        raise ValueError("on_race must be 'raise' or 'record'")
    with _parsed(module_or_func) as root:
        func = _find_kernel(root, kernel)
        threads_per_warp = threads_per_warp or _lanes_of(func)
        warps = _warps_of(func, num_warps, threads_per_warp)
        launch = Launch(warps, threads_per_warp, _triple(num_blocks, 1), on_race, check_uninitialized)
        body, attributions = _kernel_body(func)
        args = _positional(args, len(body.arguments) - len(attributions))
        blocks = _blocks_to_run(launch.grid, block_id)
        report = Report(launch.num_warps, threads_per_warp, blocks, args)
        bound = [_bind_argument(i, a, v, launch.num_threads) for i, (a, v) in enumerate(zip(body.arguments, args))]
        with np.errstate(all="ignore"):  # overflow, NaN, ... are part of the semantics, not warnings
            for b in blocks:
                ex = Machine(launch, b, report)
                ex.global_buffers = [arg for arg in bound if isinstance(arg, Buffer)]
                workgroup = [
                    ex.new_shared(f"workgroup#{i} ({a.get_name()})", a.type) for i, a in enumerate(attributions)
                ]
                ex.run_block(body, bound + workgroup)
                report.workgroup_buffers.extend(ex.workgroup_buffers())
        return report


@contextlib.contextmanager
def _parsed(module_or_func) -> Iterator[Any]:
    """``module_or_func``, or the module its text parses to (in a context that lives as long)."""
    if not isinstance(module_or_func, str):
        yield module_or_func
        return
    with ir.Context():
        yield ir.Module.parse(module_or_func)


def _lanes_of(func) -> int:
    """The ``"ttg.threads-per-warp"`` of the nearest op around ``func`` that has one, else 32."""
    op = func.operation
    while op is not None:
        if "ttg.threads-per-warp" in op.attributes:
            return ir.IntegerAttr(op.attributes["ttg.threads-per-warp"]).value
        op = op.parent.operation if op.parent is not None else None
    return 32


def _warps_of(func, num_warps: int | None, threads_per_warp: int) -> int:
    """The launch's warps: ``num_warps``, or what the kernel's ``known_block_size`` declares."""
    attributes = func.attributes
    known = list(attributes["known_block_size"]) if "known_block_size" in attributes else None
    if num_warps is None:
        if known is None:
            raise ValueError("num_warps is required when the kernel has no known_block_size")
        num_warps = known[0] // threads_per_warp
    if not 1 <= num_warps <= 64:  # warps are tracked as bits of a uint64
        raise ValueError(f"num_warps must be in [1, 64], got {num_warps}")
    num_threads = num_warps * threads_per_warp
    if known is not None and known != [num_threads, 1, 1]:
        raise ValueError(f"kernel declares known_block_size {known} but the launch has {num_threads} threads")
    return num_warps


def _kernel_body(func) -> tuple[ir.Block, list[ir.BlockArgument]]:
    """The kernel's one block and its workgroup attributions (the block arguments after the inputs)."""
    if len(func.regions[0].blocks) != 1:
        raise UnsupportedOp("kernels with more than one block (unstructured control flow) are not supported")
    body = func.regions[0].blocks[0]
    attributes = func.attributes
    attributions = list(body.arguments)[len(attributes["function_type"].value.inputs) :]
    num_workgroup = attributes["workgroup_attributions"].value if "workgroup_attributions" in attributes else 0
    if len(attributions) != num_workgroup:
        raise UnsupportedOp("private attributions (per-thread memory) are not supported")
    for a in attributions:
        if memory_space(a.type) != "workgroup":
            raise UnsupportedOp(f"workgroup attribution {a.get_name()}: {a.type} is not in workgroup memory")
    return body, attributions


def _blocks_to_run(grid: tuple[int, int, int], block_id) -> list[tuple[int, int, int]]:
    """``block_id``, or every block of ``grid`` (x fastest); ValueError for a block outside it."""
    if block_id is None:
        blocks = [(x, y, z) for z in range(grid[2]) for y in range(grid[1]) for x in range(grid[0])]
    else:
        blocks = [_triple(block_id, 0)]
    for b in blocks:
        if not all(0 <= i < g for i, g in zip(b, grid)):
            raise ValueError(f"block_id {b} outside grid {grid}")
    return blocks
