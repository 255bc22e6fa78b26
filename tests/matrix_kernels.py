"""Kernels that execute a `MatrixPlan` (planning/matrix.py) directly, for the SIMT interpreter.

`plan_kernel(plan, src, dst, dtype)` writes a `gpu.func` whose thread `t` reads its source
registers from row `t` of `%in` (threads x registers), exchanges them through shared memory as the
plan says (`nvvm.stmatrix`/`nvvm.ldmatrix` on one side, `vector.store`/`vector.load` on the other)
and writes its destination registers to row `t` of `%out`. `thread_values(layout, tensor)` gives
those rows from a tensor, so a test compares `%out` with `thread_values(dst, tensor)` exactly.
Also `random_pair`: random injective layouts of one tensor, biased so that matrix plans exist.
"""

from __future__ import annotations

import random

import numpy as np

from linear_layout import LinearLayout

SMEM = "#gpu.address_space<workgroup>"
SHAPE = "#nvvm.ld_st_matrix_shape<m = 8, n = 8>"
ELT = "#nvvm.ld_st_matrix_elt_type<b16>"
NP = {"f16": np.float16, "bf16": np.float32, "i16": np.uint16, "i8": np.uint8}


def thread_values(layout: LinearLayout, tensor: np.ndarray) -> np.ndarray:
    """(threads, registers): element of `tensor` (row-major, dim0 minor in the flat index) that
    register r of thread t = lane + 32 warp holds."""
    bases = dict(layout.flatten_outs().bases)
    reg, lane, warp = ([b[0] for b in bases.get(d, ())] for d in ("register", "lane", "warp"))
    threads, registers = 32 << len(warp), 1 << len(reg)
    flat_of = np.zeros((threads, registers), dtype=np.int64)
    for t in range(threads):
        base = _point(lane, t & 31) ^ _point(warp, t >> 5)
        for r in range(registers):
            flat_of[t, r] = base ^ _point(reg, r)
    sizes = [s for _, s in layout.out_dims]
    coords = []
    rest = flat_of
    for size in sizes:  # dim0 is the low bits of the flattened index
        coords.append(rest % size)
        rest = rest // size
    return tensor[tuple(coords)]


def _point(cols, x: int) -> int:
    out = 0
    for k, c in enumerate(cols):
        if x >> k & 1:
            out ^= c
    return out


class _Emitter:
    def __init__(self, dtype: str, src_registers: int, dst_registers: int):
        self.dtype = dtype
        self.src_registers = src_registers  # width of the source vector (read by element())
        self.registers = dst_registers  # width of the destination vector (built by inserts)
        self.lines: list[str] = []
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def emit(self, text: str) -> str:
        name = self.fresh()
        self.lines.append(f"      {name} = {text}")
        return name

    def const(self, value: int, type_: str = "index") -> str:
        return self.emit(f"arith.constant {value} : {type_}")

    def linear(self, layout: LinearLayout, lane: str, warp: str) -> str:
        """XOR of the offsets of the set bits of lane and warp (index values)."""
        bases = dict(layout.bases)
        acc = self.const(0)
        for name, value in (("lane", lane), ("warp", warp)):
            for k, basis in enumerate(bases.get(name, ())):
                if not basis[0]:
                    continue
                bit = self.emit(f"arith.shrui {value}, {self.const(k)} : index")
                bit = self.emit(f"arith.andi {bit}, {self.const(1)} : index")
                term = self.emit(f"arith.muli {bit}, {self.const(basis[0])} : index")
                acc = self.emit(f"arith.xori {acc}, {term} : index")
        return acc

    def element(self, vector: str, register: int) -> str:
        width = self.src_registers
        return self.emit(f"vector.extract {vector}[{register}] : {self.dtype} from vector<{width}x{self.dtype}>")


def _word(e: _Emitter, values: str, registers: tuple[int, ...]) -> str:
    parts = [e.element(values, r) for r in registers]
    packed = e.emit(f"vector.from_elements {', '.join(parts)} : vector<{len(parts)}x{e.dtype}>")
    word = e.emit(f"vector.bitcast {packed} : vector<{len(parts)}x{e.dtype}> to vector<1xi32>")
    return e.emit(f"vector.extract {word}[0] : i32 from vector<1xi32>")


def _pointer(e: _Emitter, base: str, offset: str) -> str:
    offset64 = e.emit(f"arith.index_cast {offset} : index to i64")
    return e.emit(f"llvm.getelementptr {base}[{offset64}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, {e.dtype}")


def _matrix_attrs(side) -> str:
    layout = "#nvvm.mma_layout<col>" if side.trans else "#nvvm.mma_layout<row>"
    return f"layout = {layout}, shape = {SHAPE}, eltType = {ELT}"


def _stmatrix(e, side, values, base, address, ins) -> None:
    words = [_word(e, values, regs) for regs in ins.words]
    where = e.emit(f"arith.xori {address}, {e.const(ins.offset)} : index")
    pointer = _pointer(e, base, where)
    e.lines.append(f"      nvvm.stmatrix {pointer}, {', '.join(words)} {{{_matrix_attrs(side)}}} : "
                   f"!llvm.ptr<3>, {', '.join(['i32'] * len(words))}")


def _ldmatrix(e, side, result, base, address, ins) -> str:
    where = e.emit(f"arith.xori {address}, {e.const(ins.offset)} : index")
    pointer = _pointer(e, base, where)
    num = side.num
    struct = "i32" if num == 1 else f"!llvm.struct<({', '.join(['i32'] * num)})>"
    loaded = e.emit(f"nvvm.ldmatrix {pointer} {{num = {num} : i32, {_matrix_attrs(side)}}} : (!llvm.ptr<3>) -> {struct}")
    for i, regs in enumerate(ins.words):
        word = loaded if num == 1 else e.emit(f"llvm.extractvalue {loaded}[{i}] : {struct}")
        halves = e.emit(f"llvm.bitcast {word} : i32 to vector<{len(regs)}x{e.dtype}>")
        for k, r in enumerate(regs):
            part = e.emit(f"vector.extract {halves}[{k}] : {e.dtype} from vector<{len(regs)}x{e.dtype}>")
            result = e.emit(f"vector.insert {part}, {result} [{r}] : {e.dtype} into vector<{e.registers}x{e.dtype}>")
    return result


def _vector_store(e, plan, values, smem, offset, ins) -> None:
    where = e.emit(f"arith.xori {offset}, {e.const(ins.offset)} : index")
    parts = [e.element(values, r) for r in ins.registers]
    vec = e.emit(f"vector.from_elements {', '.join(parts)} : vector<{len(parts)}x{e.dtype}>")
    e.lines.append(f"      vector.store {vec}, {smem}[{where}] {{alignment = {plan.other.instruction_bytes}}} : "
                   f"memref<{plan.scratch_bytes * 8 // plan.bitwidth}x{e.dtype}, {SMEM}>, vector<{len(parts)}x{e.dtype}>")


def _vector_load(e, plan, result, smem, offset, ins) -> str:
    where = e.emit(f"arith.xori {offset}, {e.const(ins.offset)} : index")
    n = len(ins.registers)
    loaded = e.emit(f"vector.load {smem}[{where}] {{alignment = {plan.other.instruction_bytes}}} : "
                    f"memref<{plan.scratch_bytes * 8 // plan.bitwidth}x{e.dtype}, {SMEM}>, vector<{n}x{e.dtype}>")
    for k, r in enumerate(ins.registers):
        part = e.emit(f"vector.extract {loaded}[{k}] : {e.dtype} from vector<{n}x{e.dtype}>")
        result = e.emit(f"vector.insert {part}, {result} [{r}] : {e.dtype} into vector<{e.registers}x{e.dtype}>")
    return result


def plan_kernel(plan, src: LinearLayout, dst: LinearLayout, dtype: str) -> str:
    """The kernel text of `plan` (see the module docstring)."""
    src_regs, dst_regs = src.get_in_dim_size("register"), dst.get_in_dim_size("register")
    threads = 32 * src.get_in_dim_size("warp")
    elements = plan.scratch_bytes * 8 // plan.bitwidth
    e = e_src = _Emitter(dtype, src_regs, dst_regs)
    tid = "%tid"
    lane = e.emit(f"arith.andi {tid}, {e.const(31)} : index")
    warp = e.emit(f"arith.shrui {tid}, {e.const(5)} : index")
    values = e.emit(f"vector.load %in[{tid}, {e.const(0)}] : memref<{threads}x{src_regs}x{dtype}>, vector<{src_regs}x{dtype}>")
    pointer = e.emit(f"memref.extract_aligned_pointer_as_index %smem : memref<{elements}x{dtype}, {SMEM}> -> index")
    base = e.emit(f"llvm.inttoptr {e.emit(f'arith.index_cast {pointer} : index to i64')} : i64 to !llvm.ptr<3>")
    store, load = (plan.matrix, plan.other) if plan.matrix.instruction == "stmatrix" else (plan.other, plan.matrix)
    addresses = {id(s): e.linear(s.address if hasattr(s, "address") else s.thread_offset, lane, warp)
                 for s in (store, load)}
    result = e.emit(f"arith.constant dense<0> : vector<{dst_regs}x{dtype}>") if dtype.startswith("i") else \
        e.emit(f"arith.constant dense<0.0> : vector<{dst_regs}x{dtype}>")
    for rep in range(plan.num_reps):
        if rep:
            e.lines.append("      gpu.barrier")
        for ins in (i for i in store.instructions if i.rep == rep):
            if hasattr(store, "address"):
                _stmatrix(e_src, store, values, base, addresses[id(store)], ins)
            else:
                _vector_store(e_src, plan, values, "%smem", addresses[id(store)], ins)
        e.lines.append("      gpu.barrier")
        for ins in (i for i in load.instructions if i.rep == rep):
            if hasattr(load, "address"):
                result = _ldmatrix(e, load, result, base, addresses[id(load)], ins)
            else:
                result = _vector_load(e, plan, result, "%smem", addresses[id(load)], ins)
    body = "\n".join(e.lines)
    return f"""
module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @k(%in: memref<{threads}x{src_regs}x{dtype}>, %out: memref<{threads}x{dst_regs}x{dtype}>)
        workgroup(%smem: memref<{elements}x{dtype}, {SMEM}>) kernel
        attributes {{known_block_size = array<i32: {threads}, 1, 1>}} {{
      %tid = gpu.thread_id x
{body}
      %zero = arith.constant 0 : index
      vector.store {result}, %out[%tid, %zero] : memref<{threads}x{dst_regs}x{dtype}>, vector<{dst_regs}x{dtype}>
      gpu.return
    }}
  }}
}}"""


def random_pair(seed: int) -> tuple[LinearLayout, LinearLayout, int]:
    """(src, dst, num_warps): layouts of one 2-D tensor; the source is injective, the destination
    too except that a quarter of the time (with several warps) its last warp repeats the others'
    data; it reuses up to three of the source's lane or register directions as its first
    registers 60% of the time, so that a matrix side's row contents can be the other side's."""
    rng = random.Random(seed)
    warps = rng.choice([1, 2, 4, 8])
    warp_bits = warps.bit_length() - 1
    total = 5 + warp_bits + rng.randint(3, 6)
    bits0 = rng.randint(3, total - 3)
    units = [(1 << b) for b in range(total)]

    def layout(order: list[int], broadcast_warp: bool = False) -> LinearLayout:
        def unflat(v: int) -> list[int]:
            return [v & ((1 << bits0) - 1), v >> bits0]

        regs = len(order) - 5 - warp_bits
        dims = [("register", order[:regs]), ("lane", order[regs:regs + 5]), ("warp", order[regs + 5:])]
        if broadcast_warp:  # the last warp repeats the others' data; its direction is a register
            dims = [("register", dims[0][1] + dims[2][1][-1:]), dims[1], ("warp", dims[2][1][:-1] + [0])]
        return LinearLayout.from_bases([(d, [unflat(v) for v in vs]) for d, vs in dims], ["dim0", "dim1"],
                                       [1 << bits0, 1 << (total - bits0)])

    src_order = units[:]
    rng.shuffle(src_order)
    dst_order = units[:]
    rng.shuffle(dst_order)
    regs = total - 5 - warp_bits
    if rng.random() < 0.6:
        source = src_order[regs + 2:regs + 5] if rng.random() < 0.5 else [src_order[0]] + src_order[regs:regs + 2]
        head = source[: rng.randint(1, 3)]
        dst_order = head + [u for u in dst_order if u not in head]
    return layout(src_order), layout(dst_order, warps > 1 and rng.random() < 0.25), warps
