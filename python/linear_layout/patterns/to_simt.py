"""Lowering tensor-level kernels to the SIMT form (the `ll-to-simt` pass).

Every `func.func` with a body in the module becomes a `gpu.func ... kernel` in one
`gpu.module @kernels`; the module gets `gpu.container_module`. Inside the kernel every tensor in
a distributed layout is one `vector<R x T>` per thread (R = the layout's register count,
duplicates of broadcast registers included), and

- `lane = tid & 31`, `warp = tid >> 5` from `gpu.thread_id x`, `block` from `gpu.block_id x`;
- `ll.load` / `ll.store` become `vector.load` / `vector.store`, one per group of registers that
  hits consecutive addresses of the innermost dimension (`get_num_consecutive_in_out`, at most
  16 bytes), with an `alignment` attribute where the alignment is provable; only the distinct
  registers of a broadcast layout are loaded or stored;
- elementwise `arith` / `math` ops are rebuilt on vectors; splat tensor constants become splat
  vector constants;
- `ttg.convert_layout` follows `convert_plan.plan_conversion`, whose strategy comes from
  `linear_layout.conversion.plan_conversion` (no-op, register permutation, warp shuffles, shared
  memory). Shared memory: one workgroup attribution per element type, sized by the largest
  `scratch_bytes` of the kernel's conversions; per repetition the predicated `vector.store`s of
  the plan's store instructions at `thread_offset ^ offset`, one `gpu.barrier`, the
  `vector.load`s, and a barrier between repetitions; broadcast destination registers are
  copies (one final `vector.shuffle`);
- `ttg.local_alloc` / `ttg.local_store` / `ttg.local_load` with an explicit shared encoding get
  one workgroup attribution per allocation and the accesses of
  `conversion.plan_local_access` (offsets `distributed.invert_and_compose(shared)`), with the
  barriers that the buffer's read/write history needs;
- `ll.apply` is lowered like `ll-lower-apply`; all index math is `emit_apply_layout`.

The original functions are replaced only when every function lowered; otherwise the new
`gpu.module` is erased and the module is left unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf, vector

from ..core.layout import LinearLayout
from ..planning.shared import plan_local_access
from ..ir.bridge import from_attribute, layout_of, memdesc_of
from .apply_layout import constant_int_value, emit_apply_layout
from ..planning.in_warp import HW_DIMS, plan_conversion, register_maps

__all__ = ["LoweringError", "Launch", "lower_module", "launch_of"]

MAX_THREADS_PER_BLOCK = 1024
MAX_ACCESS_BYTES = 16
ELEMENTWISE_DIALECTS = ("arith", "math")


class LoweringError(Exception):
    def __init__(self, location: ir.Location, message: str) -> None:
        super().__init__(message)
        self.location = location


@dataclass(frozen=True)
class Launch:
    num_warps: int | None
    threads_per_warp: int = 32
    num_ctas: int = 1


def launch_of(op: ir.Operation) -> Launch:
    values = {}
    for name in ("ttg.num-warps", "ttg.threads-per-warp", "ttg.num-ctas"):
        if name in op.attributes and isinstance(op.attributes[name], ir.IntegerAttr):
            values[name] = op.attributes[name].value
    return Launch(values.get("ttg.num-warps"), values.get("ttg.threads-per-warp", 32), values.get("ttg.num-ctas", 1))


def _element_bytes(t: ir.Type) -> int:
    if isinstance(t, ir.IntegerType):
        return max(1, (t.width + 7) // 8)
    if isinstance(t, ir.IndexType):
        return 8
    width = getattr(t, "width", None)
    if width is None:
        raise ValueError(f"unsupported element type {t}")
    return width // 8


def pad_to_launch(layout: LinearLayout, threads_per_warp: int, num_warps: int, num_ctas: int = 1) -> LinearLayout:
    """`layout` as a kernel of that launch holds it: every hardware input dimension present, in
    the standard order, lanes/warps/blocks padded with broadcast (zero) bases to the launch size.

    Raises ValueError when the layout spreads over more lanes, warps or blocks than the launch has."""
    bases = dict(layout.bases)
    expected = {"lane": threads_per_warp, "warp": num_warps, "block": num_ctas}
    source = {"lane": "threads per warp", "warp": "warps", "block": "CTAs"}
    full = []
    for dim in HW_DIMS:
        vectors = [list(b) for b in bases.get(dim, ())]
        if dim != "register":
            size = 1 << len(vectors)
            if size > expected[dim]:
                raise ValueError(f"too many {dim}s for the launch: the layout spreads over {size} {dim}s but the "
                                 f"kernel has {expected[dim]} {source[dim]} (ttg.num-warps/threads-per-warp/num-ctas)")
            while 1 << len(vectors) < expected[dim]:
                vectors.append([0] * layout.num_out_dims)
        full.append((dim, vectors))
    return LinearLayout.from_bases(full, list(layout.get_out_dim_names()), [s for _, s in layout.out_dims],
                                   require_surjective=False)


def element_bits(t: ir.Type) -> int:
    """Bits of one element of type `t` (an integer, float or index type; index is 64-bit)."""
    return 64 if isinstance(t, ir.IndexType) else t.width


def _is_tensor(t: ir.Type) -> bool:
    return isinstance(t, ir.RankedTensorType)


class _Kernel:
    """Lowers one func.func into a gpu.func."""

    def __init__(self, func_op: ir.Operation, launch: Launch, insert_block: ir.Block) -> None:
        self.func_op = func_op
        self.launch = launch
        self.insert_block = insert_block
        self.values: dict[ir.Value, ir.Value] = {}
        self.layouts: dict[str, LinearLayout] = {}
        self.i32 = ir.IntegerType.get_signless(32)
        self.constants: dict[tuple[int, str], ir.Value] = {}
        # Lane-only index math, shared by the rounds of one conversion. Sharing it between
        # conversions would be valid (one block) but gives values thousands of uses, which makes
        # canonicalize superlinear; CSE merges what is worth merging.
        self.lane_math: dict[tuple, ir.Value] = {}
        # Shared memory: scratch buffers per element type, local buffers per memdesc value,
        # thread bases per offset layout (computed once per kernel), and the accesses of each
        # buffer since the last barrier ("write"/"read").
        self.scratch: dict[str, ir.Value] = {}
        self.local: dict = {}
        self.thread_bases: dict = {}
        self.predicates: dict = {}
        self.pending: dict[str, set] = {}

    # ------------------------------------------------------------------ helpers

    def fail(self, op_or_loc, message: str):
        location = op_or_loc if isinstance(op_or_loc, ir.Location) else op_or_loc.location
        raise LoweringError(location, message)

    def layout(self, t: ir.RankedTensorType, op: ir.Operation) -> LinearLayout:
        """The hardware layout of tensor type `t`, padded to the launch's lanes/warps/blocks."""
        key = str(t)
        if key in self.layouts:
            return self.layouts[key]
        try:
            layout = layout_of(t)
        except (TypeError, ValueError) as error:
            self.fail(op, f"cannot lower {t}: {error}")
        names = layout.get_in_dim_names()
        unknown = [n for n in names if n not in HW_DIMS]
        if unknown:
            self.fail(op, f"{t} is not distributed over hardware: input dimensions {unknown}")
        try:
            layout = pad_to_launch(layout, self.launch.threads_per_warp, self.num_warps, self.launch.num_ctas)
        except ValueError as error:
            self.fail(op, f"{t}: {error}")
        if not layout.is_surjective():
            self.fail(op, f"{t} does not cover its tensor")
        self.layouts[key] = layout
        return layout

    def vector_type(self, t: ir.RankedTensorType, op) -> ir.VectorType:
        layout = self.layout(t, op)
        return ir.VectorType.get([layout.get_in_dim_size("register")], t.element_type)

    def const_i32(self, value: int) -> ir.Value:
        return self._constant(self.i32, value)

    def const_index(self, value: int) -> ir.Value:
        return self._constant(ir.IndexType.get(), value)

    def _constant(self, t: ir.Type, value: int) -> ir.Value:
        """One `arith.constant` per (type, value) for the whole kernel, at the top of its body
        with the function's location. Per-use constants would leave canonicalize to unique
        tens of thousands of them (and fuse their locations) in large kernels."""
        key = (value, str(t))
        if key not in self.constants:
            self.constants[key] = arith.constant(t, value, ip=self.constant_ip, loc=self.func_op.location)
        return self.constants[key]

    def apply(self, layout: LinearLayout, indices) -> dict[str, ir.Value]:
        """`emit_apply_layout` on i32 with the kernel's constants and `tid = lane | warp << 5`."""
        # lane < 32, warp < num_warps and registers are constants below the register count.
        return emit_apply_layout(layout, indices, int_type=self.i32, constant=self.const_i32, packed=self.packed,
                                 in_range=True)

    def lane_bits(self, select: LinearLayout, bits: int) -> list[ir.Value]:
        """`bit k of select(lane) != 0` for k < bits (`select`: lane -> register). A bit that
        depends on one lane bit j is `(lane & 1 << j) != 0`; the others come from the full
        product."""
        columns = [basis[0] for basis in dict(select.bases)["lane"]]
        product = None
        conds = []
        for k in range(bits):
            rows = [j for j, column in enumerate(columns) if column >> k & 1]
            if len(rows) == 1:
                masked = arith.andi(self.lane, self.const_i32(1 << rows[0]))
            else:
                if product is None:
                    product = self.apply(select, {"lane": self.lane})["register"]
                masked = arith.andi(product, self.const_i32(1 << k))
            conds.append(arith.cmpi(arith.CmpIPredicate.ne, masked, self.const_i32(0)))
        return conds

    def hw_indices(self, register: int = 0) -> dict:
        return {"register": register, "lane": self.lane, "warp": self.warp if self.num_warps > 1 else 0,
                "block": self.block if self.launch.num_ctas > 1 else 0}

    # ------------------------------------------------------------------ driver

    def lower(self) -> ir.Operation:
        func_op = self.func_op
        function_type = func_op.attributes["function_type"].value
        name = func_op.attributes["sym_name"].value
        if len(func_op.regions[0].blocks) != 1:
            self.fail(func_op, f"'{name}': only single-block functions can be lowered")
        if function_type.results:
            self.fail(func_op, f"'{name}': a kernel cannot return values (it returns {list(map(str, function_type.results))})")
        for t in function_type.inputs:
            if _is_tensor(t):
                self.fail(func_op, f"'{name}': tensor arguments cannot be lowered ({t}); load tiles with ll.load")
        self.num_warps = self._num_warps()
        threads = self.num_warps * self.launch.threads_per_warp
        if self.launch.threads_per_warp != 32:
            self.fail(func_op, f"'{name}': only 32 threads per warp are supported, the kernel has "
                               f"ttg.threads-per-warp = {self.launch.threads_per_warp}")
        if threads > MAX_THREADS_PER_BLOCK:
            self.fail(func_op, f"'{name}': too many warps for the launch: {self.num_warps} warps x 32 threads = "
                               f"{threads} threads, more than the {MAX_THREADS_PER_BLOCK} threads of a block")
        old_block = func_op.regions[0].blocks[0]
        workgroup = self._workgroup_buffers(old_block)
        with ir.InsertionPoint(self.insert_block), func_op.location:
            kernel = gpu.GPUFuncOp(ir.TypeAttr.get(ir.FunctionType.get(list(function_type.inputs), [])),
                                   sym_name=name, kernel=True, known_block_size=[threads, 1, 1])
        self.kernel = kernel
        if workgroup:
            kernel.operation.attributes["workgroup_attributions"] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(64), len(workgroup))
        body = kernel.body.blocks.append(*function_type.inputs, *[t for _, t in workgroup])
        for old, new in zip(old_block.arguments, body.arguments):
            self.values[old] = new
        for (key, _), arg in zip(workgroup, list(body.arguments)[len(function_type.inputs):]):
            if isinstance(key, str):
                self.scratch[key] = arg
            else:
                self.local[key]["buffer"] = arg
        with ir.InsertionPoint(body), func_op.location:
            thread_id = gpu.thread_id(gpu.Dimension.x)
            self.constant_ip = ir.InsertionPoint(thread_id.owner)
            tid = arith.index_cast(self.i32, thread_id)
            self.lane = arith.andi(tid, self.const_i32(31))
            self.warp = arith.shrui(tid, self.const_i32(5))
            # known_block_size is 32 * num_warps threads, so tid < 32 * num_warps and
            # lane | warp << 5 is tid itself: index math packing (lane, warp) uses tid.
            self.packed = {(("lane", 5, self.lane), ("warp", (self.num_warps - 1).bit_length(), self.warp)): tid} \
                if self.num_warps > 1 else {}
            self.block = arith.index_cast(self.i32, gpu.block_id(gpu.Dimension.x)) if self.launch.num_ctas > 1 else None
            for self.op_number, op in enumerate(old_block.operations):
                op = op.operation
                with op.location:
                    self.lower_op(op)
        return kernel.operation

    def _num_warps(self) -> int:
        if self.launch.num_warps is not None:
            return self.launch.num_warps
        warps = 1
        for op in self.func_op.regions[0].blocks[0].operations:
            for value in list(op.operation.results) + list(op.operation.operands):
                if _is_tensor(value.type) and value.type.encoding is not None:
                    try:
                        warps = max(warps, layout_of(value.type).get_in_dim_size("warp")
                                    if layout_of(value.type).has_in_dim("warp") else 1)
                    except (TypeError, ValueError) as error:
                        self.fail(op.operation, f"cannot lower {value.type}: {error}")
        return warps

    def get(self, value: ir.Value) -> ir.Value:
        return self.values[value]

    def lower_op(self, op: ir.Operation) -> None:
        name = op.name
        if name == "func.return":
            if len(op.operands):
                self.fail(op, "a kernel cannot return values")
            gpu.return_([])
        elif name == "ll.load":
            self.lower_load(op)
        elif name == "ll.store":
            self.lower_store(op)
        elif name == "ttg.convert_layout":
            self.lower_convert(op)
        elif name == "ttg.local_alloc":
            if len(op.operands):
                self.local_store(op.operands[0], op.results[0], op)
        elif name == "ttg.local_store":
            self.local_store(op.operands[0], op.operands[1], op)
        elif name == "ttg.local_load":
            self.values[op.results[0]] = self.local_load(op.operands[0], op.results[0].type, op)
        elif name == "ll.apply":
            self.lower_apply(op)
        elif name == "arith.constant" and _is_tensor(op.results[0].type):
            self.lower_constant(op)
        elif any(_is_tensor(v.type) for v in list(op.operands) + list(op.results)):
            if name.split(".")[0] in ELEMENTWISE_DIALECTS and not len(op.regions):
                self.lower_elementwise(op)
            else:
                self.fail(op, f"'{name}' on tensors cannot be lowered to SIMT form (supported: ll.load, "
                              "ll.store, ttg.convert_layout, elementwise arith/math ops, splat constants)")
        elif len(op.regions):
            self.fail(op, f"'{name}' has regions; control flow cannot be lowered to SIMT form yet")
        else:
            self.clone(op, [r.type for r in op.results])

    def clone(self, op: ir.Operation, result_types) -> ir.Operation:
        attributes = {a: op.attributes[a] for a in op.attributes}
        new = ir.Operation.create(op.name, results=result_types, operands=[self.get(v) for v in op.operands],
                                  attributes=attributes, loc=op.location)
        for old, result in zip(op.results, new.results):
            self.values[old] = result
        return new

    # ------------------------------------------------------------------ ops

    def lower_apply(self, op: ir.Operation) -> None:
        from ..passes.ll_lower_apply import _cast, _plan

        try:
            layout, int_type = _plan(op)
        except ValueError as error:
            self.fail(op, str(error))
        indices = {name: _cast(self.get(value), int_type)
                   for name, value in zip(layout.get_in_dim_names(), op.operands)}
        coordinates = emit_apply_layout(layout, indices, int_type=int_type)
        for name, result in zip(layout.get_out_dim_names(), op.results):
            self.values[result] = _cast(coordinates[name], result.type)

    def lower_constant(self, op: ir.Operation) -> None:
        t = op.results[0].type
        attr = op.attributes["value"]
        if not isinstance(attr, ir.DenseElementsAttr) or not attr.is_splat:
            self.fail(op, "only splat tensor constants can be lowered (a non-splat constant depends on the thread)")
        vector_type = self.vector_type(t, op)
        splat = ir.DenseElementsAttr.get_splat(vector_type, attr.get_splat_value())
        self.values[op.results[0]] = arith.constant(vector_type, splat)

    def lower_elementwise(self, op: ir.Operation) -> None:
        layout = None
        for value in list(op.operands) + list(op.results):
            if _is_tensor(value.type):
                this = self.layout(value.type, op)
                if layout is not None and this != layout:
                    self.fail(op, f"'{op.name}' mixes tensors with different layouts; insert ttg.convert_layout")
                layout = this
            elif value in self.values or True:
                if not _is_tensor(value.type) and value.type != ir.IndexType.get() and not isinstance(
                        value.type, (ir.IntegerType, ir.FloatType)):
                    self.fail(op, f"'{op.name}' has an operand of unsupported type {value.type}")
        for value in op.operands:
            if not _is_tensor(value.type):
                self.fail(op, f"'{op.name}' mixes tensors and scalars")
        result_types = [self.vector_type(r.type, op) for r in op.results]
        self.clone(op, result_types)

    def _tile_plan(self, op, tensor_type, memref_type, offsets):
        layout = self.layout(tensor_type, op)
        rank = tensor_type.rank
        element = tensor_type.element_type
        element_bytes = _element_bytes(element)
        reduced = layout.remove_zero_bases_along_dim("register")
        names = list(layout.get_out_dim_names())
        identity = not memref_type.layout or (str(memref_type.layout).startswith("affine_map") and \
            memref_type.layout.value == ir.AffineMap.get_identity(rank))
        vec = 1
        if identity:
            minor_first = reduced.transpose_outs(list(reversed(names)))
            vec = minor_first.get_num_consecutive_in_out()
            vec = max(1, min(vec, MAX_ACCESS_BYTES // element_bytes, reduced.get_in_dim_size("register")))
        alignment = element_bytes
        if vec > 1:
            shape = list(memref_type.shape)
            strides_ok = all(not ir.ShapedType.is_dynamic_size(s) for s in shape[1:]) and (
                rank == 1 or shape[-1] % vec == 0)
            offsets_ok = True
            if offsets:
                known = constant_int_value(offsets[-1])
                offsets_ok = known is not None and known % vec == 0
            if strides_ok and offsets_ok:
                alignment = vec * element_bytes
        return layout, reduced, vec, alignment

    def _addresses(self, reduced: LinearLayout, vec: int, offsets) -> list[list[ir.Value]]:
        """Per access (registers r0 = k*vec), the memref indices."""
        base = self.apply(reduced, self.hw_indices(0))
        names = list(reduced.get_out_dim_names())
        zero = {"lane": 0, "warp": 0, "block": 0}
        accesses = []
        for r0 in range(0, reduced.get_in_dim_size("register"), vec):
            constant = reduced.apply({"register": r0, **zero})
            indices = []
            for k, dim in enumerate(names):
                coordinate = base[dim]
                if constant[dim]:
                    coordinate = arith.xori(coordinate, self.const_i32(constant[dim]))
                index = arith.index_castui(ir.IndexType.get(), coordinate)
                if offsets:
                    index = arith.addi(index, self.get(offsets[k]))
                indices.append(index)
            accesses.append(indices)
        return accesses

    def lower_load(self, op: ir.Operation) -> None:
        memref_value = op.operands[0]
        offsets = list(op.operands)[1:]
        tensor_type = op.results[0].type
        layout, reduced, vec, alignment = self._tile_plan(op, tensor_type, memref_value.type, offsets)
        element = tensor_type.element_type
        piece_type = ir.VectorType.get([vec], element)
        accesses = self._addresses(reduced, vec, offsets)
        if vec == 1:  # scalars: a concatenation of 1-element vectors would canonicalize to interleaves
            value = vector.from_elements(ir.VectorType.get([len(accesses)], element),
                                         [memref.load(self.get(memref_value), indices) for indices in accesses])
        else:
            pieces = [vector.load(piece_type, self.get(memref_value), indices, alignment=alignment)
                      for indices in accesses]
            unit = _unit([range(vec)], element) if len(pieces) > 1 else 1
            if unit > 1:  # concatenate packed units (an i8 pair is one i16), not single registers
                value = _from_units(_concat_units([_to_units(piece, unit, element) for piece in pieces]), unit,
                                    element)
            else:
                value = _concat(pieces)
        full_of, reduced_of = register_maps(layout)
        if len(reduced_of) != len(full_of):
            value = vector.shuffle(value, value, reduced_of)
        self.values[op.results[0]] = value

    def lower_store(self, op: ir.Operation) -> None:
        value = self.get(op.operands[0])
        memref_value = op.operands[1]
        offsets = list(op.operands)[2:]
        tensor_type = op.operands[0].type
        layout, reduced, vec, alignment = self._tile_plan(op, tensor_type, memref_value.type, offsets)
        full_of, _ = register_maps(layout)
        for k, indices in enumerate(self._addresses(reduced, vec, offsets)):
            registers = [full_of[r] for r in range(k * vec, (k + 1) * vec)]
            if vec == 1:
                memref.store(vector.extract(value, [], registers), self.get(memref_value), indices)
                continue
            piece = value
            if registers != list(range(layout.get_in_dim_size("register"))):
                piece = _gather(value, registers, tensor_type.element_type)
            vector.store(piece, self.get(memref_value), indices, alignment=alignment)

    def lower_convert(self, op: ir.Operation) -> None:
        src_type, dst_type = op.operands[0].type, op.results[0].type
        src = self.layout(src_type, op)
        dst = self.layout(dst_type, op)
        element = src_type.element_type
        plan = self._convert_plan(op)
        value = self.get(op.operands[0])
        if plan.kind == "shared":
            self.values[op.results[0]] = self.shared_convert(plan.shared, value, element,
                                                             self.vector_type(dst_type, op))
            return
        src_full_of, _ = register_maps(src)
        _, dst_reduced_of = register_maps(dst)
        rounds = plan.rounds
        if all(r.source_lane is None and r.register_select is None for r in rounds) and plan.reader_select is None:
            mask = [src_full_of[rounds[dst_reduced_of[i]].register_base] for i in range(len(dst_reduced_of))]
            if mask != list(range(src.get_in_dim_size("register"))):
                value = vector.shuffle(value, value, mask)
            self.values[op.results[0]] = value
            return
        element_of = {}

        def register(j: int) -> ir.Value:
            if j not in element_of:
                element_of[j] = vector.extract(value, [], [src_full_of[j]])
            return element_of[j]

        def conditions(select: LinearLayout | None, bits: int) -> list[ir.Value]:
            if select is None:
                return []
            key = ("select", select, bits, self.op_number)  # per conversion: see lane_math
            if key not in self.lane_math:
                self.lane_math[key] = self.lane_bits(select, bits)
            return self.lane_math[key]

        provider_conds = conditions(rounds[0].register_select, len(plan.select_basis))
        reader_conds = conditions(plan.reader_select, len(plan.reader_basis))
        _, to_shuffle, from_shuffle = _shuffle_casts(element)
        width = None
        received = []
        for r in rounds:
            candidates = [register(r.register_base ^ _span(plan.select_basis, t))
                          for t in range(1 << len(plan.select_basis))]
            provided = _select_tree(candidates, provider_conds)
            if r.source_lane is not None:
                width = width or self.const_i32(32)
                if r.xor_mode:
                    offset, mode = self.const_i32(r.lane_xor), gpu.ShuffleMode.XOR
                else:
                    key = ("lane", r.source_lane, r.lane_xor, self.op_number)
                    if key not in self.lane_math:
                        offset = self.apply(r.source_lane, {"lane": self.lane})["lane"]
                        if r.lane_xor:
                            offset = arith.xori(offset, self.const_i32(r.lane_xor))
                        self.lane_math[key] = offset
                    offset = self.lane_math[key]
                    mode = gpu.ShuffleMode.IDX
                shuffled = gpu.ShuffleOp(to_shuffle(provided), offset, width, mode).results[0]
                provided = from_shuffle(shuffled)
            received.append(provided)
        outputs = [_select_tree([received[i ^ _span(plan.reader_basis, t)] for t in range(1 << len(plan.reader_basis))],
                                reader_conds) for i in range(len(rounds))]
        dst_type_v = self.vector_type(dst_type, op)
        self.values[op.results[0]] = vector.from_elements(dst_type_v, [outputs[dst_reduced_of[i]]
                                                                       for i in range(len(dst_reduced_of))])


    # ------------------------------------------------------------------ shared memory

    def _workgroup_buffers(self, block: ir.Block) -> list[tuple]:
        """(key, memref type) of every workgroup attribution the kernel needs: one scratch buffer
        per element type of the shared-memory conversions (the largest of them), then one buffer
        per `ttg.local_alloc`. Plans are computed (and cached) here, before any IR is built."""
        scratch: dict[str, tuple[ir.Type, int]] = {}
        local = []
        for op in block.operations:
            op = op.operation
            if op.name == "ttg.convert_layout":
                plan = self._convert_plan(op)
                if plan.kind == "shared":
                    element = op.operands[0].type.element_type
                    elements = plan.shared.scratch_bytes * 8 // element_bits(element)
                    key = str(element)
                    scratch[key] = (element, max(elements, scratch.get(key, (None, 0))[1]))
            elif op.name == "ttg.local_alloc":
                memdesc, shared = self._memdesc(op.results[0].type, op)
                self.local[op.results[0]] = {"shared": shared, "element": memdesc.element_type,
                                             "key": f"local{len(local)}"}
                local.append((op.results[0], _workgroup_type(shared.get_in_dim_size("offset"),
                                                              memdesc.element_type)))
        return [(key, _workgroup_type(n, t)) for key, (t, n) in scratch.items()] + local

    def _memdesc(self, t: ir.Type, op):
        try:
            memdesc = memdesc_of(t)
            encoding = from_attribute(memdesc.encoding)
        except (TypeError, ValueError) as error:
            self.fail(op, f"cannot lower {t}: {error}")
        try:
            shared = encoding if isinstance(encoding, LinearLayout) else encoding.to_linear_layout(list(memdesc.shape))
        except (TypeError, ValueError, AttributeError) as error:
            self.fail(op, f"cannot lower {t}: {error}")
        if not shared.has_in_dim("offset") or any(n not in ("offset", "block") for n in shared.get_in_dim_names()):
            self.fail(op, f"cannot lower {t}: {memdesc.encoding} is not a linear shared layout (offset, block)")
        if shared.has_in_dim("block") and shared.get_in_dim_size("block") > 1:
            self.fail(op, f"cannot lower {t}: shared buffers spread over several CTAs are not supported")
        return memdesc, shared

    def _convert_plan(self, op: ir.Operation):
        src_type, dst_type = op.operands[0].type, op.results[0].type
        src = self.layout(src_type, op)
        dst = self.layout(dst_type, op)
        try:
            return plan_conversion(src, dst, element_bits(src_type.element_type))
        except ValueError as error:
            self.fail(op, f"cannot convert {src_type} to {dst_type}: {error}")

    def barrier(self) -> None:
        gpu.barrier()
        self.pending.clear()

    def sync(self, key: str, access: str) -> None:
        """A barrier when `access` ("read"/"write") of buffer `key` would race with what other
        warps did to it since the last barrier (RAW, WAR, WAW)."""
        done = self.pending.get(key, set())
        if "write" in done or (access == "write" and "read" in done):
            self.barrier()
        self.pending.setdefault(key, set()).add(access)

    def thread_base(self, thread_offset: LinearLayout) -> tuple[ir.Value, ir.Value]:
        """(i32, index) of the (lane, warp) part of an access's offsets, once per kernel."""
        if thread_offset not in self.thread_bases:
            base = self.apply(thread_offset, {"lane": self.lane,
                                              "warp": self.warp if self.num_warps > 1 else 0})["offset"]
            self.thread_bases[thread_offset] = (base, arith.index_castui(ir.IndexType.get(), base))
        return self.thread_bases[thread_offset]

    def store_predicate(self, predicate) -> ir.Value | None:
        key = tuple(sorted(predicate.items()))
        if key in self.predicates:
            return self.predicates[key]
        terms = []
        for dim, index in (("lane", self.lane), ("warp", self.warp), ("block", self.block)):
            mask = predicate.get(dim, 0)
            if mask and index is not None:
                terms.append(arith.cmpi(arith.CmpIPredicate.eq, arith.andi(index, self.const_i32(mask)),
                                        self.const_i32(0)))
        cond = None
        for term in terms:
            cond = term if cond is None else arith.andi(cond, term)
        self.predicates[key] = cond
        return cond

    def address(self, base: tuple[ir.Value, ir.Value], offset: int, additive: bool) -> ir.Value:
        """`base ^ offset` as an index: an immediate `addi` when the offset shares no bit with
        the base (`additive`), else an `xori` on i32."""
        if offset == 0:
            return base[1]
        if additive:
            return arith.addi(base[1], self.const_index(offset))
        return arith.index_castui(ir.IndexType.get(), arith.xori(base[0], self.const_i32(offset)))

    def emit_stores(self, buffer: ir.Value, value: ir.Value, access, instructions, base) -> None:
        cond = self.store_predicate(access.predicate)
        if not instructions:
            return
        if cond is not None:
            if_op = scf.IfOp(cond)
            ip = ir.InsertionPoint(if_op.then_block)
        else:
            ip = _nullcontext()
        with ip:
            for ins in instructions:
                index = self.address(base, ins.offset, ins.additive)
                if access.vector == 1:
                    memref.store(vector.extract(value, [], [ins.registers[0]]), buffer, [index])
                else:
                    piece = _gather(value, list(ins.registers), ir.VectorType(value.type).element_type)
                    vector.store(piece, buffer, [index], alignment=access.instruction_bytes)
            if cond is not None:
                scf.YieldOp([])

    def emit_loads(self, buffer: ir.Value, element: ir.Type, access, instructions, base) -> list[ir.Value]:
        pieces = []
        piece_type = ir.VectorType.get([access.vector], element)
        for ins in instructions:
            index = self.address(base, ins.offset, ins.additive)
            if access.vector == 1:
                pieces.append(memref.load(buffer, [index]))
            else:
                pieces.append(vector.load(piece_type, buffer, [index], alignment=access.instruction_bytes))
        return pieces

    def assemble(self, access, pieces: list[ir.Value], element: ir.Type, result_type: ir.VectorType) -> ir.Value:
        """The destination vector from the loaded pieces (instruction order) and the copies."""
        position = {}
        for k, ins in enumerate(access.instructions):
            for j, r in enumerate(ins.registers):
                position[r] = k * access.vector + j
        for r, s in access.copies:
            position[r] = position[s]
        count = result_type.shape[0]
        mask = [position[r] for r in range(count)]
        if access.vector == 1:
            value = vector.from_elements(ir.VectorType.get([len(pieces)], element), pieces)
            if mask != list(range(count)) or len(pieces) != count:
                value = vector.shuffle(value, value, mask)
            return value
        unit = _unit([mask, range(access.vector)], element)
        if unit > 1:  # keep the loaded units packed through the concatenation and the shuffle
            value = _concat_units([_to_units(piece, unit, element) for piece in pieces])
            units = [m // unit for m in mask[::unit]]
            if units != list(range(len(units))) or len(pieces) * access.vector != count:
                value = vector.shuffle(value, value, units)
            return _from_units(value, unit, element)
        value = _concat(pieces)
        if mask != list(range(count)) or len(pieces) * access.vector != count:
            value = vector.shuffle(value, value, mask)
        return value

    def shared_convert(self, shared, value: ir.Value, element: ir.Type, result_type: ir.VectorType) -> ir.Value:
        """Store, barrier, load per repetition (a barrier between repetitions), then copies.

        The repetition loop is unrolled: one group of stores, `gpu.barrier`, loads per round
        (and a `gpu.barrier` between rounds), with static register selection. An `scf.for`
        carrying the registers through iter_args costs a register rotation per round that the
        stock pipeline does not unroll away (docs/passes.md has the measured PTX)."""
        key = str(element)
        buffer = self.scratch[key]
        store, load = shared.store, shared.load
        self.sync(key, "write")
        base_st = self.thread_base(store.thread_offset)
        base_ld = self.thread_base(load.thread_offset)
        pieces: list[ir.Value] = []
        for rep in range(shared.num_reps):
            if rep:
                self.barrier()  # the previous repetition's loads are done (WAR)
            self.emit_stores(buffer, value, store, [i for i in store.instructions if i.rep == rep], base_st)
            self.barrier()
            pieces += self.emit_loads(buffer, element, load, [i for i in load.instructions if i.rep == rep], base_ld)
        self.pending[key] = {"read"}
        # pieces are in instruction order per rep; instructions are sorted by rep already
        return self.assemble(load, pieces, element, result_type)

    def local_store(self, tensor: ir.Value, memdesc_value: ir.Value, op) -> None:
        entry = self.local[memdesc_value] if memdesc_value in self.local else None
        if entry is None:
            self.fail(op, "the shared buffer does not come from a ttg.local_alloc of this function")
        access = self._local_access(tensor.type, entry, "store", op)
        self.sync(entry["key"], "write")
        self.emit_stores(entry["buffer"], self.get(tensor), access, list(access.instructions),
                         self.thread_base(access.thread_offset))

    def local_load(self, memdesc_value: ir.Value, result_type, op) -> ir.Value:
        entry = self.local[memdesc_value] if memdesc_value in self.local else None
        if entry is None:
            self.fail(op, "the shared buffer does not come from a ttg.local_alloc of this function")
        access = self._local_access(result_type, entry, "load", op)
        self.sync(entry["key"], "read")
        pieces = self.emit_loads(entry["buffer"], entry["element"], access, list(access.instructions),
                                 self.thread_base(access.thread_offset))
        return self.assemble(access, pieces, entry["element"], self.vector_type(result_type, op))

    def _local_access(self, tensor_type, entry, kind: str, op):
        distributed = self.layout(tensor_type, op)
        try:
            return plan_local_access(distributed, entry["shared"], element_bits(tensor_type.element_type), kind=kind)
        except (ValueError, AssertionError) as error:
            self.fail(op, f"cannot lower {op.name} of {tensor_type}: {error}")


def _span(basis: list[int], t: int) -> int:
    out = 0
    for k, b in enumerate(basis):
        if t >> k & 1:
            out ^= b
    return out


def _select_tree(candidates: list[ir.Value], conds: list[ir.Value]) -> ir.Value:
    """candidates[t] chosen by the bits of t (conds[k] is bit k)."""
    for cond in conds:
        candidates = [arith.select(cond, candidates[q + 1], candidates[q]) for q in range(0, len(candidates), 2)]
    return candidates[0]


def _shuffle_casts(element: ir.Type):
    """(type shuffled, to, from): gpu.shuffle moves 32-bit values."""
    i32 = ir.IntegerType.get_signless(32)
    if isinstance(element, (ir.F32Type,)) or (isinstance(element, ir.IntegerType) and element.width == 32):
        return element, (lambda v: v), (lambda v: v)
    if isinstance(element, ir.IntegerType) and element.width < 32:
        return i32, (lambda v: arith.extui(i32, v)), (lambda v: arith.trunci(element, v))
    if isinstance(element, (ir.F16Type, ir.BF16Type)):
        i16 = ir.IntegerType.get_signless(16)
        return i32, (lambda v: arith.extui(i32, arith.bitcast(i16, v))), \
            (lambda v: arith.bitcast(element, arith.trunci(i16, v)))
    raise ValueError(f"cannot shuffle {element}")


MAX_UNIT_BITS = 32


def _unit(groups, element: ir.Type) -> int:
    """The most registers (a power of two, at most 32 bits together) that every group in
    `groups` moves as aligned runs: group[k*u : (k+1)*u] == range(group[k*u], group[k*u] + u)
    with group[k*u] % u == 0. 1 for 32-bit elements and wider, or when no run of 2 fits.

    Sub-32-bit values are moved in such units (`vector.bitcast` to one integer per unit) so that
    i8/f16 registers stay packed from load to store instead of being unpacked and repacked."""
    bits = element_bits(element)
    groups = [list(g) for g in groups]
    best = 1
    u = 2
    while u * bits <= MAX_UNIT_BITS and groups:
        if not all(len(g) % u == 0 and all(g[k] % u == 0 and g[k:k + u] == list(range(g[k], g[k] + u))
                                           for k in range(0, len(g), u)) for g in groups):
            break
        best, u = u, u * 2
    return best


def _unit_type(count: int, unit: int, element: ir.Type) -> ir.VectorType:
    return ir.VectorType.get([count // unit], ir.IntegerType.get_signless(unit * element_bits(element)))


def _to_units(value: ir.Value, unit: int, element: ir.Type) -> ir.Value:
    count = ir.VectorType(value.type).shape[0]
    return vector.bitcast(_unit_type(count, unit, element), value)


def _from_units(value: ir.Value, unit: int, element: ir.Type) -> ir.Value:
    count = ir.VectorType(value.type).shape[0] * unit
    return vector.bitcast(ir.VectorType.get([count], element), value)


def _concat_units(pieces: list[ir.Value]) -> ir.Value:
    """`_concat`, but 1-element pieces are joined with `vector.from_elements` (a shuffle of two
    1-element vectors would canonicalize to `vector.interleave`)."""
    if len(pieces) > 1 and all(ir.VectorType(p.type).shape[0] == 1 for p in pieces):
        element = ir.VectorType(pieces[0].type).element_type
        return vector.from_elements(ir.VectorType.get([len(pieces)], element),
                                    [vector.extract(p, [], [0]) for p in pieces])
    return _concat(pieces)


def _gather(value: ir.Value, registers: list[int], element: ir.Type) -> ir.Value:
    """`vector.shuffle(value, value, registers)`, moving aligned runs of registers as units."""
    unit = _unit([registers], element)
    if unit == 1:
        return vector.shuffle(value, value, registers)
    units = _to_units(value, unit, element)
    return _from_units(vector.shuffle(units, units, [r // unit for r in registers[::unit]]), unit, element)


def _workgroup_type(elements: int, element: ir.Type) -> ir.MemRefType:
    return ir.MemRefType.get([max(1, elements)], element,
                             memory_space=ir.Attribute.parse("#gpu.address_space<workgroup>"))


class _nullcontext:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _concat(pieces: list[ir.Value]) -> ir.Value:
    while len(pieces) > 1:
        merged = []
        for k in range(0, len(pieces), 2):
            a, b = pieces[k], pieces[k + 1]
            n = ir.VectorType(a.type).shape[0] + ir.VectorType(b.type).shape[0]
            merged.append(vector.shuffle(a, b, list(range(n))))
        pieces = merged
    return pieces[0]


def lower_module(module_op: ir.Operation) -> list[tuple[ir.Location, str]]:
    """Lower every func.func of `module_op` into a gpu.func kernel; return the errors (then the
    module is unchanged)."""
    body = module_op.regions[0].blocks[0]
    funcs = [op.operation for op in body.operations
             if op.operation.name == "func.func" and len(op.operation.regions[0].blocks)]
    if not funcs:
        return []
    launch = launch_of(module_op)
    with ir.InsertionPoint(body), module_op.location:
        gpu_module = gpu.GPUModuleOp("kernels")
    gpu_module.regions[0].blocks.append()
    gpu_block = gpu_module.regions[0].blocks[0]
    errors = []
    for func_op in funcs:
        try:
            _Kernel(func_op, launch, gpu_block).lower()
        except LoweringError as error:
            errors.append((error.location, str(error)))
    if errors:
        gpu_module.operation.erase()
        return errors
    for func_op in funcs:
        func_op.erase()
    module_op.attributes["gpu.container_module"] = ir.UnitAttr.get()
    return []

