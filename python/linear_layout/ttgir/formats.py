"""Triton's op assembly formats, as a table: adding an op is one `OpFormat` entry.

Each entry copies the op's ODS `assemblyFormat` (TritonOps.td, TritonGPUOps.td,
TritonNvidiaGPUOps.td, TritonAMDGPUOps.td) into a small interpreter that reads the custom
syntax into generic-form pieces (operands, types, attributes) and prints them back:

    `lit`                  a literal token
    $name                  an operand (ODS order in `operands`; `?` optional, `*` variadic) or an
                           attribute named in `attributes` (its kind says how it is spelled)
    type($n)               the type of operand or result n (a list for a variadic one)
    type(operands)         the types of all operands, in ODS order
    qualified(type($n))    the same; `stripped(type($n))` prints a memdesc as `<...>`, and
                           `stripped(type($n), !tt.ptr)` a type of that dialect prefix
    functional-type        `(operand types) -> result types`
    attr-dict              the remaining attributes, `{...}`
    custom<Token>($dep, $token)
                           Triton's optional async token, glued to the value before it:
                           `[%dep]` (`[]` without a dep) exactly when the op has the `$token` result
    custom<BarriersAndPreds>($barriers, $preds)
                           `, %barrier[%pred]` per barrier, glued to the value before it
    ( ... )?               an optional group, present when its `^`-marked element is

Operand types are not in most formats: the reader takes them from the values' definitions.
Result types come from the format or from `result_rule`.

    >>> FORMATS["ttg.convert_layout"].format
    '$src attr-dict `:` type($src) `->` type($result)'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .syntax import Token, TtgirSyntaxError, attribute_entries

__all__ = [
    "OpFormat",
    "FORMATS",
    "ENUMS",
    "Parsed",
    "parse_custom",
    "print_custom",
    "TRITON_DIALECTS",
    "UNDECLARED",
    "mlir_name",
    "triton_names",
]

TRITON_DIALECTS = ("tt", "ttg", "ttng", "amdg", "nvg")

# Triton's I32 enums: the keyword printed in custom syntax and the integer of generic form.
ENUMS: dict[str, dict[str, int]] = {
    "proc_id": {"x": 0, "y": 1, "z": 2},
    "rmw_op": {"and": 1, "or": 2, "xor": 3, "add": 4, "fadd": 5, "max": 6, "min": 7, "umax": 8, "umin": 9, "exch": 10},
    "sem": {"relaxed": 1, "acquire": 2, "release": 3, "acq_rel": 4},
    "scope": {"gpu": 1, "cta": 2, "sys": 3},
    "cache": {"none": 1, "ca": 2, "cg": 3, "wb": 4, "cs": 5, "wt": 6, "cv": 7},
    "evict": {"normal": 1, "evict_first": 2, "evict_last": 3},
    "reduce_kind": {"add": 1, "min": 2, "max": 3, "inc": 4, "dec": 5, "and": 6, "or": 7, "xor": 8},
    "precision": {"tf32": 0, "tf32x3": 1, "ieee": 2, "bf16x3": 3, "bf16x6": 4},
    "tmem_wait": {"load": 0, "store": 1},
    "packed_arith": {"add": 0, "sub": 1, "mul": 2, "fma": 3, "min": 4, "max": 5},
    "scale_elem": {"e4m3": 0, "e5m2": 1, "e2m3": 2, "e3m2": 3, "e2m1": 4, "bf16": 5, "fp16": 6},
}


@dataclass(frozen=True)
class _Element:
    kind: str  # literal, ref, type, ftype, attrdict, group
    text: str = ""
    stripped: str = ""  # the dialect prefix a type is printed without ("!ttg.memdesc")
    anchor: bool = False
    children: tuple[_Element, ...] = ()


@dataclass(frozen=True)
class OpFormat:
    """One op: its assembly format (None: Triton prints it in generic form), its operands in ODS
    order, its results, the attributes its format spells out, and how its result types are found
    when the format does not print them ("pointee:$ptr", "token", "same-as-operands", "type-of:$operand")."""

    name: str
    format: str | None
    operands: tuple[str, ...] = ()
    results: tuple[str, ...] = ()
    attributes: dict[str, str] = field(default_factory=dict)
    result_rule: str = ""

    @property
    def elements(self) -> tuple[_Element, ...]:
        return _compile(self.format or "")

    def operand_names(self) -> tuple[str, ...]:
        return tuple(o.rstrip("?*") for o in self.operands)

    def kind_of(self, name: str) -> str:
        for operand in self.operands:
            if operand.rstrip("?*") == name:
                return "variadic" if operand.endswith("*") else "optional" if operand.endswith("?") else "single"
        return ""

    def needs_segments(self) -> bool:
        return sum(1 for o in self.operands if o[-1] in "?*") > 1

    def result_names(self) -> tuple[str, ...]:
        return tuple(r.rstrip("?*") for r in self.results)

    def needs_result_segments(self) -> bool:
        """Whether the op has more than one optional or variadic result (Triton's
        `AttrSizedResultSegments`: generic form carries `resultSegmentSizes`)."""
        return sum(1 for r in self.results if r[-1] in "?*") > 1


_FORMAT_TOKEN = re.compile(
    r"`[^`]*`|custom<\w+>\([^)]*\)|(?:qualified\()?type\(operands\)\)?|\$\w+\^?|qualified\(type\(\$\w+\)\)\^?|stripped\(type\(\$\w+\)(?:,\s*![\w.]+)?\)\^?"
    r"|type\(\$\w+\)\^?|functional-type\([^)]*\)|attr-dict|\(|\)\??|\S+"
)


def _compile(format_text: str) -> tuple[_Element, ...]:
    stack: list[list[_Element]] = [[]]
    for token in _FORMAT_TOKEN.findall(format_text):
        if token == "(":
            stack.append([])
        elif token in (")?", ")"):
            children = tuple(stack.pop())
            stack[-1].append(_Element("group", children=children))
        elif token.startswith("`"):
            stack[-1].append(_Element("literal", token[1:-1]))
        elif token == "attr-dict":
            stack[-1].append(_Element("attrdict"))
        elif token.startswith("functional-type"):
            stack[-1].append(_Element("ftype"))
        elif "type(operands)" in token:
            stack[-1].append(_Element("operand-types"))
        elif token.startswith("custom<"):  # custom<Token>($dep), custom<BarriersAndPreds>($b, $p)
            kind = token[7 : token.index(">")]
            names = tuple(_Element("ref", n) for n in re.findall(r"\$(\w+)", token))
            stack[-1].append(_Element(f"custom:{kind}", children=names))
        else:
            anchor = token.endswith("^")
            token = token.rstrip("^")
            reference = re.search(r"\$(\w+)", token)
            if reference is None:
                raise ValueError(f"format directive {token!r} names no $operand")
            name = reference.group(1)
            if token.startswith("$"):
                stack[-1].append(_Element("ref", name, anchor=anchor))
            else:
                prefix = re.search(r",\s*(![\w.]+)\)$", token)
                stripped = (prefix.group(1) if prefix else "!ttg.memdesc") if token.startswith("stripped") else ""
                stack[-1].append(_Element("type", name, stripped=stripped, anchor=anchor))
    return tuple(stack[0])


def _f(name, format_text, operands=(), results=("result",), attributes=None, result_rule=""):
    return OpFormat(name, format_text, tuple(operands), tuple(results), dict(attributes or {}), result_rule)


_UNARY = "$src attr-dict `:` type($src) `->` type($result)"
_MEMORY = "(`cacheModifier` `=` $cache^)? (`evictionPolicy` `=` $evict^)? (`volatile` $isVolatile^)?"
_MEMORY_ATTRS = {"cache": "enum:cache", "evict": "enum:evict", "isVolatile": "unit"}


def _buffer_op(name, head, operands, *, other=False, memory=True, typed="result", attributes=None):
    """An AMD buffer op (TritonAMDGPUOps.td): ``head``, then ``$ptr[$offsets]`` with an optional
    mask (and ``other`` value), an optional stride, the cache attributes when ``memory``, and
    ``type($ptr) -> type($<typed>)``; it has a result unless ``typed`` is the stored ``value``."""
    format_text = (
        head
        + "$ptr `[` $offsets `]` (`,` $mask^)? "
        + ("(`,` $other^)? " if other else "")
        + "(`stride` `=` $stride^)? "
        + (_MEMORY + " " if memory else "")
        + f"attr-dict `:` type($ptr) `->` type(${typed})"
    )
    results = () if typed == "value" else ("result",)
    return _f(name, format_text, operands, results, attributes or (_MEMORY_ATTRS if memory else None))


_TABLE = (
    # tt (TritonOps.td)
    _f("tt.func", "custom:func", results=()),
    _f("tt.return", "attr-dict ($srcs^ `:` type($srcs))?", ["srcs*"], ()),
    _f("tt.get_program_id", "$axis attr-dict `:` type($result)", attributes={"axis": "enum:proc_id"}),
    _f("tt.get_num_programs", "$axis attr-dict `:` type($result)", attributes={"axis": "enum:proc_id"}),
    _f("tt.make_range", "attr-dict `:` type($result)"),
    _f("tt.splat", _UNARY, ["src"]),
    _f("tt.broadcast", _UNARY, ["src"]),
    _f("tt.expand_dims", _UNARY, ["src"]),
    _f("tt.trans", _UNARY, ["src"]),
    _f("tt.bitcast", _UNARY, ["src"]),
    _f("tt.int_to_ptr", _UNARY, ["src"]),
    _f("tt.ptr_to_int", _UNARY, ["src"]),
    _f(
        "tt.fp_to_fp",
        "$src attr-dict (`,` `rounding` `=` $rounding^)? `:` type($src) `->` type($result)",
        ["src"],
        attributes={"rounding": "keyword"},
    ),
    _f(
        "tt.reshape",
        "$src (`allow_reorder` $allow_reorder^)? (`efficient_layout` $efficient_layout^)? attr-dict "
        "`:` type($src) `->` type($result)",
        ["src"],
        attributes={"allow_reorder": "unit", "efficient_layout": "unit"},
    ),
    _f("tt.join", "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)", ["lhs", "rhs"]),
    _f(
        "tt.split",
        "$src attr-dict `:` type($src) `->` type($outLHS)",
        ["src"],
        ("outLHS", "outRHS"),
        result_rule="same-as-first-result",
    ),
    _f("tt.cat", "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)", ["lhs", "rhs"]),
    _f("tt.addptr", "$ptr `,` $offset attr-dict `:` type($result) `,` type($offset)", ["ptr", "offset"]),
    _f(
        "tt.load",
        "$ptr (`,` $mask^)? (`,` $other^)? " + _MEMORY + " attr-dict `:` type($ptr)",
        ["ptr", "mask?", "other?"],
        attributes=_MEMORY_ATTRS,
        result_rule="pointee:ptr",
    ),
    _f(
        "tt.store",
        "$ptr `,` $value (`,` $mask^)? " + _MEMORY + " attr-dict `:` type($ptr)",
        ["ptr", "value", "mask?"],
        (),
        attributes=_MEMORY_ATTRS,
    ),
    _f(
        "tt.dot",
        "$a `,` $b `,` $c (`,` `inputPrecision` `=` $inputPrecision^)? attr-dict `:` type($a) `*` "
        "type($b) `->` type($d)",
        ["a", "b", "c"],
        ("d",),
        attributes={"inputPrecision": "enum:precision"},
    ),
    _f(
        "tt.dot_scaled",
        "$a (`scale` $a_scale^)? `,` $b (`scale` $b_scale^)? `,` $c `lhs` `=` $a_elem_type `rhs` `=` $b_elem_type "
        "attr-dict `:` type($a) (`,` type($a_scale)^)? `*` type($b) (`,` type($b_scale)^)? `->` type($d)",
        ["a", "b", "c", "a_scale?", "b_scale?"],
        ("d",),
        attributes={"a_elem_type": "enum:scale_elem", "b_elem_type": "enum:scale_elem"},
    ),
    _f("tt.gather", "$src `[` $indices `]` attr-dict `:` functional-type", ["src", "indices"]),
    _f(
        "tt.elementwise_inline_asm",
        "$asm_string attr-dict ($args^ `:` type($args))? `->` type($result)",
        ["args*"],
        ("result*",),
        attributes={"asm_string": "plain"},
    ),
    _f(
        "tt.clampf",
        "$x `,` $min `,` $max `,` `propagateNan` `=` $propagateNan attr-dict `:` type($result)",
        ["x", "min", "max"],
        attributes={"propagateNan": "keyword"},
    ),
    _f("tt.precise_divf", "$x `,` $y attr-dict `:` type($x)", ["x", "y"], result_rule="type-of:x"),
    _f("tt.precise_sqrt", "$x attr-dict `:` type($x)", ["x"], result_rule="type-of:x"),
    _f("tt.mulhiui", "$x `,` $y attr-dict `:` type($x)", ["x", "y"], result_rule="type-of:x"),
    _f("tt.histogram", "$src (`,` $mask^)? attr-dict `:` type($src) `->` type($result)", ["src", "mask?"]),
    _f("tt.approx_divf", "$x `,` $y attr-dict `:` type($x)", ["x", "y"], result_rule="type-of:x"),
    _f("tt.unsplat", "$src attr-dict `:` type($src)", ["src"], result_rule="element-of:src"),
    _f("tt.extern_elementwise", "$srcs attr-dict `:` functional-type", ["srcs*"]),
    _f(
        "tt.atomic_poll",
        "$sem `,` $scope `,` $ptr `,` $expected attr-dict `:` type($ptr) `,` type($expected) `->` type($result)",
        ["ptr", "expected"],
        attributes={"sem": "enum:sem", "scope": "enum:scope"},
    ),
    _f(
        "tt.make_tensor_descriptor",
        "$base `,` `[` $shape `]` `,` `[` $strides `]` attr-dict "
        "`:` stripped(type($base), !tt.ptr) `,` stripped(type($result), !tt.tensordesc)",
        ["base", "shape*", "strides*"],
    ),
    _f("tt.grid_dependency_wait", "attr-dict", (), ()),
    _f("tt.grid_dependency_launch_dependents", "attr-dict", (), ()),
    _f(
        "tt.atomic_load",
        "$sem `,` $scope `,` $ptr attr-dict `:` functional-type",
        ["ptr"],
        attributes={"sem": "enum:sem", "scope": "enum:scope"},
    ),
    _f(
        "tt.atomic_store",
        "$sem `,` $scope `,` $ptr `,` $val attr-dict `:` type($ptr)",
        ["ptr", "val"],
        (),
        attributes={"sem": "enum:sem", "scope": "enum:scope"},
    ),
    _f("tt.map_elementwise", None, ["srcs*"], ("result*",)),
    _f("tt.map_elementwise.return", "attr-dict $result `:` type($result)", ["result*"], ()),
    _f("tt.reduce", None, ["srcs*"], ("result*",)),
    _f("tt.scan", None, ["srcs*"], ("result*",)),
    _f("tt.reduce.return", "attr-dict $result `:` type($result)", ["result*"], ()),
    _f("tt.scan.return", "attr-dict $result `:` type($result)", ["result*"], ()),
    _f(
        "tt.atomic_rmw",
        "$atomic_rmw_op `,` $sem `,` $scope `,` $ptr `,` $val (`,` $mask^)? attr-dict `:` functional-type",
        ["ptr", "val", "mask?"],
        attributes={"atomic_rmw_op": "enum:rmw_op", "sem": "enum:sem", "scope": "enum:scope"},
    ),
    _f(
        "tt.atomic_cas",
        "$sem `,` $scope `,` $ptr `,` $cmp `,` $val attr-dict `:` functional-type",
        ["ptr", "cmp", "val"],
        attributes={"sem": "enum:sem", "scope": "enum:scope"},
    ),
    _f(
        "tt.assert",
        "$condition `,` $message attr-dict `:` type($condition)",
        ["condition"],
        (),
        attributes={"message": "plain"},
    ),
    _f("tt.print", "$prefix attr-dict (`:` $args^ `:` type($args))?", ["args*"], (), attributes={"prefix": "plain"}),
    _f(
        "tt.call",
        "$callee `(` $operands `)` attr-dict `:` functional-type($operands, results)",
        ["operands*"],
        ("result*",),
        attributes={"callee": "plain"},
    ),
    _f(
        "tt.descriptor_load",
        "$desc `[` $indices `]` " + _MEMORY + " attr-dict `:` qualified(type($desc)) `->` type($result)",
        ["desc", "indices*"],
        attributes=_MEMORY_ATTRS,
    ),
    _f(
        "tt.descriptor_store",
        "$desc `[` $indices `]` `,` $src attr-dict `:` qualified(type($desc)) `,` type($src)",
        ["desc", "indices*", "src"],
        (),
    ),
    _f(
        "tt.descriptor_gather",
        "$desc `[` $x_offsets `,` $y_offset `]` attr-dict `:` functional-type",
        ["desc", "x_offsets", "y_offset"],
    ),
    _f(
        "tt.descriptor_scatter",
        "$desc `[` $x_offsets `,` $y_offset `]` `,` $src attr-dict `:` type(operands)",
        ["desc", "x_offsets", "y_offset", "src"],
        (),
    ),
    _f(
        "tt.descriptor_reduce",
        "$kind `,` $desc `[` $indices `]` `,` $src attr-dict `:` qualified(type($desc)) `,` type($src)",
        ["desc", "src", "indices*"],
        (),
        attributes={"kind": "enum:reduce_kind"},
    ),
    # ttg (TritonGPUOps.td)
    _f("ttg.convert_layout", _UNARY, ["src"]),
    _f("ttg.fp4_to_fp", _UNARY, ["src"]),
    _f("ttg.mask", None, ["pred"], ("result*",)),
    _f("ttg.mask.return", "$result attr-dict `:` type($result)", ["result*"], ()),
    _f("ttg.barrier", "$addrSpace attr-dict", (), (), attributes={"addrSpace": "keyword"}),
    _f("ttg.local_alloc", "($src^)? attr-dict `:` functional-type", ["src?"]),
    _f(
        "ttg.local_load",
        "$src (`token` $token^)? attr-dict `:` qualified(type($src)) `->` type($result)",
        ["src", "token?"],
    ),
    _f("ttg.local_store", "$src `,` $dst attr-dict `:` type($src) `->` qualified(type($dst))", ["src", "dst"], ()),
    _f("ttg.local_dealloc", "$src attr-dict `:` qualified(type($src))", ["src"], ()),
    _f(
        "ttg.memdesc_index",
        "$src `[` $index `]` attr-dict `:` qualified(type($src)) `->` qualified(type($result))",
        ["src", "index"],
    ),
    _f(
        "ttg.memdesc_subslice",
        "$src `[` $offsets `]` attr-dict `:` qualified(type($src)) `->` qualified(type($result))",
        ["src"],
        attributes={"offsets": "i32list"},
    ),
    _f("ttg.memdesc_trans", "$src attr-dict `:` qualified(type($src)) `->` qualified(type($result))", ["src"]),
    _f("ttg.memdesc_reshape", "$src attr-dict `:` qualified(type($src)) `->` qualified(type($result))", ["src"]),
    _f(
        "ttg.async_copy_global_to_local",
        "$src `,` $result (`mask` $mask^)? (`other` $other^)? "
        + _MEMORY
        + " attr-dict `:` type($src) `->` stripped(type($result))",
        ["src", "result", "mask?", "other?"],
        ("token",),
        attributes=_MEMORY_ATTRS,
        result_rule="token",
    ),
    _f(
        "ttg.async_commit_group",
        "(`tokens` $inputTokens^)? attr-dict",
        ["inputTokens*"],
        ("asyncToken",),
        result_rule="token",
    ),
    _f("ttg.async_wait", "($asyncToken^)? attr-dict", ["asyncToken*"], ("retToken",), result_rule="token"),
    _f("ttg.warp_id", "attr-dict", result_rule="fixed:i32"),
    _f("ttg.global_scratch_alloc", "attr-dict `:` type($result)"),
    _f("ttg.memdesc_reinterpret", "$src attr-dict `:` qualified(type($src)) `->` qualified(type($result))", ["src"]),
    _f(
        "ttg.local_gather",
        "$src `[` $indices `]` attr-dict `:` qualified(type($src)) `,` type($indices) `->` type($result)",
        ["src", "indices"],
    ),
    _f(
        "ttg.local_scatter",
        "$dst `[` $indices `]` `,` $values attr-dict `:` qualified(type($dst)) `,` type($indices) `,` type($values)",
        ["dst", "values", "indices"],
        (),
    ),
    _f(
        "ttg.local_atomic_scatter_rmw",
        "$atomic_rmw_op `,` $dst `[` $indices `]` `,` $values attr-dict `:` functional-type",
        ["dst", "indices", "values"],
        attributes={"atomic_rmw_op": "enum:rmw_op"},
    ),
    _f(
        "ttg.inline_asm",
        "$asm_string attr-dict $args `:` functional-type",
        ["args*"],
        ("result*",),
        attributes={"asm_string": "plain"},
    ),
    _f(
        "ttg.predicate_stage",
        "$iv `,` $ub `,` $step `maxStage` $maxStage `stage` $stage attr-dict `:` type($iv) `->` type($result)",
        ["iv", "ub", "step"],
        attributes={"maxStage": "i32", "stage": "i32"},
    ),
    # `ttg.warp_specialize` spans regions with keywords between them: `warp_specialize` reads and
    # writes it; its partitions op only exists in generic form (Triton prints it inside the parent)
    _f("ttg.warp_specialize", "custom:warp_specialize", ["explicitCaptures*"], ("result*",)),
    _f("ttg.warp_specialize.partitions", None, (), ()),
    _f("ttg.warp_yield", "($values^)? attr-dict (`:` type($values)^)?", ["values*"], ()),
    _f("ttg.warp_return", "attr-dict", (), ()),
    # ttng (TritonNvidiaGPUOps.td)
    _f(
        "ttng.arrive_barrier",
        "$alloc `,` $count (`,` $pred^)? attr-dict `:` qualified(type($alloc))",
        ["alloc", "pred?"],
        (),
        attributes={"count": "i32"},
    ),
    _f(
        "ttng.reinterpret_tensor_descriptor",
        "$rawDesc attr-dict `:` qualified(type($rawDesc)) `to` qualified(type($result))",
        ["rawDesc"],
    ),
    _f("ttng.async_copy_mbarrier_arrive", "$barrier attr-dict `:` qualified(type($barrier))", ["barrier"], ()),
    _f(
        "ttng.clc_get_program_id",
        "$clcResult `,` $dim attr-dict `:` type($clcResult) `->` type($result)",
        ["clcResult"],
        attributes={"dim": "enum:proc_id"},
    ),
    _f("ttng.clc_try_cancel_sync", "attr-dict `:` type($result)"),
    _f("ttng.clc_is_canceled", "$clcResult attr-dict `:` type($clcResult) `->` type($result)", ["clcResult"]),
    _f("ttng.fence_async_shared", "attr-dict", (), ()),
    _f("ttng.fence_mbarrier_init_release_cluster", "attr-dict", (), ()),
    _f("ttng.cluster_barrier", "attr-dict", (), ()),
    _f(
        "ttng.async_shared_store",
        "$src `,` $dst `,` $mbarrier attr-dict `:` type($src) `->` qualified(type($dst)) `,` qualified(type($mbarrier))",
        ["src", "dst", "mbarrier"],
        (),
    ),
    _f(
        "ttng.warp_group_dot",
        "$a `,` $b `,` $c (`,` $useC^)? attr-dict `:` type($a) `*` qualified(type($b)) `->` type($d)",
        ["a", "b", "c", "useC?"],
        ("d",),
    ),
    _f(
        "ttng.warp_group_dot_wait",
        "$inputs attr-dict `:` type($inputs)",
        ["inputs*"],
        ("outputs*",),
        result_rule="same-as-operands",
    ),
    _f(
        "ttng.init_barrier",
        "$alloc `,` $count attr-dict `:` qualified(type($alloc))",
        ["alloc"],
        (),
        attributes={"count": "i32"},
    ),
    _f("ttng.inval_barrier", "$alloc attr-dict `:` qualified(type($alloc))", ["alloc"], ()),
    _f(
        "ttng.barrier_expect",
        "$alloc `,` $size attr-dict `,` $pred `:` qualified(type($alloc))",
        ["alloc", "pred"],
        (),
        attributes={"size": "i32"},
    ),
    _f(
        "ttng.wait_barrier",
        "$alloc `,` $phase (`,` $pred^)? (`deps` $deps^)? attr-dict `:` qualified(type($alloc)) (`,` type($deps)^)?",
        ["alloc", "phase", "pred?", "deps*"],
        (),
    ),
    _f(
        "ttng.async_tma_copy_global_to_local",
        "$desc `[` $coord `]` $result `,` $barrier `,` $pred attr-dict "
        "`:` qualified(type($desc)) `,` qualified(type($barrier)) `->` qualified(type($result))",
        ["desc", "coord*", "result", "barrier", "pred"],
        (),
    ),
    _f(
        "ttng.async_tma_copy_local_to_global",
        "$desc `[` $coord `]` $src attr-dict `:` qualified(type($desc)) `,` qualified(type($src))",
        ["desc", "coord*", "src"],
        (),
    ),
    _f("ttng.async_tma_store_wait", "attr-dict", (), ()),
    _f(
        "ttng.async_tma_gather",
        "$desc `[` $x_offsets `,` $y_offset `]` $result `,` $barrier `,` $pred attr-dict `:` type(operands)",
        ["desc", "x_offsets", "y_offset", "barrier", "result", "pred"],
        (),
    ),
    _f(
        "ttng.async_tma_scatter",
        "$desc `[` $x_offsets `,` $y_offset `]` $src attr-dict `:` type(operands)",
        ["desc", "x_offsets", "y_offset", "src"],
        (),
    ),
    _f(
        "ttng.async_tma_reduce",
        "$kind `,` $desc `[` $coord `]` $src attr-dict `:` qualified(type($desc)) `,` qualified(type($src))",
        ["desc", "coord*", "src"],
        (),
        attributes={"kind": "enum:reduce_kind"},
    ),
    _f(
        "ttng.packed_arith",
        "$op_kind $operands attr-dict `:` functional-type",
        ["operands*"],
        attributes={"op_kind": "enum:packed_arith"},
    ),
    _f(
        "ttng.clc_try_cancel",
        "$result `,` $mbarrier attr-dict `:` qualified(type($result)) `,` qualified(type($mbarrier))",
        ["result", "mbarrier"],
        (),
    ),
    _f(
        "ttng.clc_load_result",
        "$src attr-dict `:` qualified(type($src)) `->` type($clcResult)",
        ["src"],
        ("clcResult",),
    ),
    _f(
        "ttng.tensormap_create",
        "$desc_ptr `,` $global_address `,` `[` $box_dim `]` `,` `[` $global_dim `]` `,` `[` $global_stride `]` "
        "`,` `[` $element_stride `]` attr-dict `:` functional-type",
        ["desc_ptr", "global_address", "box_dim*", "global_dim*", "global_stride*", "element_stride*"],
        (),
    ),
    _f("ttng.tensormap_fenceproxy_acquire", "$desc_ptr attr-dict `:` qualified(type($desc_ptr))", ["desc_ptr"], ()),
    # ttng tensor memory (sm_100): the memdesc of `#ttng.tensor_memory` is an opaque type (`types`)
    _f("ttng.tmem_alloc", "($src^)? attr-dict `:` functional-type", ["src?"], ("result", "token?")),
    _f(
        "ttng.tmem_load",
        "$src custom<Token>($dep, $token) attr-dict `:` qualified(type($src)) `->` type($result) (`,` type($red)^)?",
        ["src", "dep?"],
        ("result", "token?", "red?"),
    ),
    _f(
        "ttng.tmem_store",
        "$src `,` $dst custom<Token>($dep, $token) `,` $pred attr-dict `:` type($src) `->` qualified(type($dst))",
        ["dst", "dep?", "src", "pred"],
        ("token?",),
    ),
    _f("ttng.tmem_subslice", "$src attr-dict `:` qualified(type($src)) `->` qualified(type($result))", ["src"]),
    _f(
        "ttng.tmem_copy",
        "$src `,` $dst attr-dict `:` qualified(type(operands))",
        ["src", "dst"],
        (),
    ),
    _f("ttng.tmem_wait", "$kind attr-dict", (), (), attributes={"kind": "enum:tmem_wait"}),
    _f(
        "ttng.tc_gen5_mma",
        "$a `,` $b `,` $d custom<Token>($acc_dep, $token) `,` $useD `,` $pred "
        "custom<BarriersAndPreds>($barriers, $barrier_preds) attr-dict `:` qualified(type($a)) `,` "
        "qualified(type($b)) `,` qualified(type($d)) (`,` qualified(type($barriers))^)?",
        ["a", "b", "d", "acc_dep?", "useD", "pred", "barriers*", "barrier_preds*"],
        ("token?",),
    ),
    _f(
        "ttng.tc_gen5_mma_scaled",
        "$a `,` $b `,` $d custom<Token>($acc_dep, $token) `,` $a_scale `,` $b_scale `,` $useD `,` $pred "
        "`lhs` `=` $a_type `rhs` `=` $b_type custom<BarriersAndPreds>($barriers, $barrier_preds) attr-dict "
        "`:` qualified(type($a)) `,` qualified(type($b)) `,` qualified(type($d)) `,` qualified(type($a_scale)) "
        "`,` qualified(type($b_scale)) (`,` qualified(type($barriers))^)?",
        ["a", "b", "d", "acc_dep?", "a_scale", "b_scale", "useD", "pred", "barriers*", "barrier_preds*"],
        ("token?",),
        attributes={"a_type": "enum:scale_elem", "b_type": "enum:scale_elem"},
    ),
    _f(
        "ttng.tc_gen5_commit",
        "$barrier (`,` $pred^)? (`descs` $descs^)? attr-dict `:` qualified(type($barrier)) "
        "(`,` qualified(type($descs))^)?",
        ["barrier", "pred?", "descs*"],
        (),
    ),
    # amdg (TritonAMDGPUOps.td)
    _buffer_op("amdg.buffer_load", "", ["ptr", "offsets", "stride?", "mask?", "other?"], other=True),
    _buffer_op("amdg.buffer_store", "$value `,` ", ["value", "ptr", "offsets", "stride?", "mask?"], typed="value"),
    _buffer_op(
        "amdg.buffer_atomic_rmw",
        "$atomic_rmw_op `,` $sem `,` $scope `,` $value `,` ",
        ["ptr", "offsets", "value", "stride?", "mask?"],
        memory=False,
        attributes={"atomic_rmw_op": "enum:rmw_op", "sem": "enum:sem", "scope": "enum:scope"},
    ),
    _f(
        "amdg.buffer_atomic_cas",
        "$sem `,` $scope `,` $cmp `,` $val `,` $ptr `[` $offsets `]` (`stride` `=` $stride^)? attr-dict "
        "`:` type($ptr) `->` type($result)",
        ["ptr", "offsets", "cmp", "val", "stride?"],
        attributes={"sem": "enum:sem", "scope": "enum:scope"},
    ),
    _f(
        "amdg.extract_slice",
        "$source $static_offsets attr-dict `:` type($source) `to` type($result)",
        ["source"],
        attributes={"static_offsets": "i64array"},
    ),
    _f("amdg.concat", "$sources attr-dict `:` type($sources) `->` type($result)", ["sources*"]),
    _f("amdg.async_wait", "($asyncToken^)? attr-dict", ["asyncToken*"], ("retToken",), result_rule="token"),
    _f(
        "amdg.init_barrier",
        "$alloc `,` $count attr-dict `:` qualified(type($alloc))",
        ["alloc"],
        (),
        attributes={"count": "i32"},
    ),
    _f("amdg.wait_barrier", "$alloc `,` $phase attr-dict `:` qualified(type($alloc))", ["alloc", "phase"], ()),
    _f(
        "amdg.arrive_barrier",
        "$alloc `,` $count attr-dict `:` qualified(type($alloc)) `->` type($result)",
        ["alloc"],
        attributes={"count": "i32"},
    ),
    _f(
        "amdg.async_copy_local_to_global",
        "$src `,` $dst attr-dict `:` qualified(type($src)) `->` type($dst)",
        ["src", "dst"],
        ("token",),
        result_rule="token",
    ),
    _f("amdg.async_copy_mbarrier_arrive", "$barrier attr-dict `:` qualified(type($barrier))", ["barrier"], ()),
    # gfx1250 tensor data mover (TDM): tensor descriptors in, async tokens out
    _f(
        "amdg.update_tensor_descriptor",
        "$desc (`add_offsets` `=` `[` $add_offsets^ `]`)? (`set_bounds` `=` `[` $set_bounds^ `]`)? "
        "(`pred` `=` $pred^)? attr-dict `:` type($desc)",
        ["desc", "add_offsets*", "set_bounds*", "pred?"],
        result_rule="type-of:desc",
    ),
    _f(
        "amdg.async_tdm_copy_global_to_local",
        "$desc `into` $dst (`,` `barrier` `=` $barrier^)? attr-dict `:` type($desc) "
        "(`,` qualified(type($barrier))^)? `->` qualified(type($dst))",
        ["desc", "dst", "barrier?"],
        ("token",),
        result_rule="token",
    ),
    _f(
        "amdg.async_tdm_copy_local_to_global",
        "$desc `from` $src (`,` `barrier` `=` $barrier^)? attr-dict `:` qualified(type($src)) "
        "(`,` qualified(type($barrier))^)? `->` type($desc)",
        ["desc", "src", "barrier?"],
        ("token",),
        result_rule="token",
    ),
    _f(
        "amdg.async_tdm_fused_copy_global_to_local",
        "$descs `into` $dsts attr-dict `:` type($descs) `->` qualified(type($dsts))",
        ["descs*", "dsts*"],
        ("token",),
        result_rule="token",
    ),
    _f(
        "amdg.async_tdm_gather",
        "$desc `[` $indices `]` `to` $dst (`,` `barrier` `=` $barrier^)? attr-dict `:` type($indices) `,` "
        "qualified(type($dst)) (`,` qualified(type($barrier))^)? `->` type($desc)",
        ["desc", "indices", "dst", "barrier?"],
        ("token",),
        result_rule="token",
    ),
    _f(
        "amdg.async_tdm_scatter",
        "$desc `[` $indices `]` `from` $src (`,` `barrier` `=` $barrier^)? attr-dict `:` type($indices) `,` "
        "qualified(type($src)) (`,` qualified(type($barrier))^)? `->` type($desc)",
        ["desc", "indices", "src", "barrier?"],
        ("token",),
        result_rule="token",
    ),
    _f("amdg.async_tdm_wait", "$asyncToken attr-dict", ["asyncToken*"], ("retToken",), result_rule="token"),
    _f(
        "amdg.tdm_prefetch",
        "$desc `[` $indices `]` `,` $pred `,` `speculative` `=` $speculative (`returnOffsets` $returnOffsets^)? "
        "attr-dict `:` type($desc) (`->` type($offsets)^)?",
        ["desc", "indices*", "pred"],
        ("offsets?",),
        attributes={"returnOffsets": "unit"},
    ),
    _f("amdg.cluster_barrier_arrive", "attr-dict", (), ()),
    _f("amdg.cluster_barrier_wait", "attr-dict", (), ()),
    _f("amdg.in_thread_transpose", _UNARY, ["src"]),
    *(
        _f(
            f"amdg.scaled_{kind}",
            "$input `scale` $scale attr-dict `:` type($input) `,` type($scale) `->` type($output)",
            ["input", "scale"],
            ("output",),
        )
        for kind in ("upcast_fp4", "upcast_fp8", "downcast_fp4", "downcast_fp8")
    ),
    _f("amdg.local_load_packed_transposed", "$src attr-dict `:` qualified(type($src)) `->` type($result)", ["src"]),
    _f(  # an absent $other still gets its space: `[tensor<...>]  -> <...>`
        "amdg.buffer_load_to_local",
        "$ptr `[` $offsets `]` (`mask` `=` $mask^)? (`other` `=` $other^)? (`stride` `=` $stride^)? "
        "(`cachePolicy` `=` $cachePolicy^)? `into` $dest attr-dict "
        "`:` type($ptr) `[` type($offsets) `]` type($other) `->` stripped(type($dest))",
        ["dest", "ptr", "offsets", "mask?", "other?", "stride?"],
        ("token",),
        attributes={"cachePolicy": "attribute"},
        result_rule="token",
    ),
    _f("amdg.cond_barrier", "$pred attr-dict", ["pred"], ()),
    _f("amdg.async_tdm_intrinsic_wait", "attr-dict", (), ("token",), result_rule="token"),
    _f(
        "amdg.masked_load",
        "$ptr `,` $mask `,` $falseVal (`,` $multicastMask^)? attr-dict `:` functional-type",
        ["ptr", "mask", "falseVal", "multicastMask?"],
    ),
    _f(
        "amdg.masked_store",
        "$ptr `,` $value `,` $mask attr-dict `:` type(operands)",
        ["ptr", "value", "mask"],
        (),
    ),
    # nvg (NVGPUOps.td)
    _f("nvg.cluster_id", "attr-dict", result_rule="fixed:i32"),
    _f(
        "nvg.wgmma",
        "$opA `,` $opB `,` $useC (`,` $opC^)? attr-dict `:` functional-type",
        ["opA", "opB", "useC", "opC?"],
    ),
    _f(
        "nvg.ld_acquire",
        "$sem `,` $scope `,` $addr (`,` $mask^)? attr-dict `:` functional-type",
        ["addr", "mask?"],
        attributes={"sem": "enum:sem", "scope": "enum:scope"},
    ),
    _f(
        "nvg.wgmma_wait_group",
        "$input attr-dict `:` type($input)",
        ["input"],
        ("output",),
        result_rule="same-as-operands",
    ),
    _f("nvg.tensor_memory_base", "attr-dict", result_rule="fixed:!llvm.ptr<6>"),
    _f("nvg.warp_group_barrier_id", "attr-dict", result_rule="fixed:i32"),
)

FORMATS: dict[str, OpFormat] = {entry.name: entry for entry in _TABLE}

# `ttg` is the IRDL dialect of `dialect/ttg.irdl.mlir`, which rejects ops it does not declare: the
# table's other `ttg` ops (IRDL cannot declare `ttg.warp_specialize`'s dotted name, terminators and
# regions with arguments; `ttg.mask` and `ttg.fp4_to_fp` are not declared yet) are, in MLIR, ops of the unregistered
# dialect `ttg_unregistered`; `print_ttgir` gives them their names back.
UNREGISTERED = "ttg_unregistered."
UNDECLARED = frozenset(
    {
        "ttg.warp_specialize",
        "ttg.warp_specialize.partitions",
        "ttg.warp_yield",
        "ttg.warp_return",
        "ttg.fp4_to_fp",
        "ttg.mask",
        "ttg.mask.return",
    }
)


def mlir_name(name: str) -> str:
    """The name the op `name` has in the MLIR module (`ttg.warp_yield` -> `ttg_unregistered.warp_yield`)."""
    return UNREGISTERED + name[4:] if name in UNDECLARED else name


def triton_names(asm: str) -> str:
    """MLIR's generic text `asm` with the ops of `UNDECLARED` under their Triton names."""
    return asm.replace(f'"{UNREGISTERED}', '"ttg.')


@dataclass
class Parsed:
    """The pieces of one custom-syntax op."""

    operands: dict[str, list[str]] = field(default_factory=dict)
    types: dict[str, list[str]] = field(default_factory=dict)
    attributes: list[tuple[str, str | None]] = field(default_factory=list)
    functional: tuple[list[str], list[str]] | None = None


class _Cursor:
    def __init__(self, text: str, tokens: tuple[Token, ...], op_name: str) -> None:
        self.text = text
        self.tokens = tokens
        self.pos = 0
        self.op_name = op_name

    def peek(self) -> Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def at(self, text: str) -> bool:
        """Whether the next token is `text`."""
        token = self.peek()
        return token is not None and token.text == text

    def at_kind(self, kind: str) -> bool:
        """Whether the next token is of `kind`."""
        token = self.peek()
        return token is not None and token.kind == kind

    def error(self, message: str) -> TtgirSyntaxError:
        token = self.peek() or (self.tokens[-1] if self.tokens else None)
        line, column = (token.line, token.column) if token else (0, 0)
        return TtgirSyntaxError(f"'{self.op_name}': {message}", line, column)

    def take(self) -> Token:
        token = self.peek()
        if token is None:
            raise self.error("unexpected end of the op")
        self.pos += 1
        return token

    def span(self, start: int, end: int) -> str:
        return self.text[self.tokens[start].start : self.tokens[end - 1].end]

    def type_end(self) -> int:
        """Index past one type starting here."""
        index, depth = self.pos, 0
        while index < len(self.tokens):
            token = self.tokens[index]
            if depth == 0 and index > self.pos and token.text in (",", "->", "*", "{", ")", "]", "[", "to"):
                break
            if token.text in ("(", "[", "{", "<"):
                depth += 1
            elif token.text in (")", "]", "}", ">"):
                if depth == 0:
                    break
                depth -= 1
            index += 1
        if index == self.pos:
            raise self.error("expected a type")
        return index

    def parse_type(self, prefix: str = "!ttg.memdesc") -> str:
        start = self.pos
        first = self.peek()
        if first is None:
            raise self.error("expected a type")
        if first.text == "(":  # a function type never appears where a value type is expected
            raise self.error("expected a type, found '('")
        self.pos = self.type_end()
        text = self.span(start, self.pos)
        return prefix + text if text.startswith("<") else text

    def parse_type_list(self) -> list[str]:
        types = [self.parse_type()]
        while self.at(",") and self._type_follows():
            self.pos += 1
            types.append(self.parse_type())
        return types

    def _type_follows(self) -> bool:
        following = self.tokens[self.pos + 1] if self.pos + 1 < len(self.tokens) else None
        return following is not None and (following.kind in ("ident", "bang") or following.text == "<")


def _is_present(element: _Element, cursor: _Cursor, entry: OpFormat) -> bool:
    """Whether the optional group starting with `element` is written here."""
    token = cursor.peek()
    if token is None:
        return False
    if element.kind == "literal":
        return token.text == element.text
    if element.kind == "ref" and entry.kind_of(element.text):
        return token.kind == "value"
    if element.kind == "ref":
        kind = entry.attributes.get(element.text, "plain")
        if kind.startswith("enum") or kind == "keyword":
            return token.kind == "ident"
        return token.kind in ("number", "string")
    if element.kind == "attrdict":
        return token.text == "{"
    return token.kind in ("ident", "bang") or token.text == "<"


def _parse_attribute(cursor: _Cursor, name: str, kind: str) -> str | None:
    if kind.startswith("enum:"):
        keyword = cursor.take()
        values = ENUMS[kind[5:]]
        if keyword.text not in values:
            raise TtgirSyntaxError(
                f"'{cursor.op_name}': unknown {name} '{keyword.text}' (known: {', '.join(values)})",
                keyword.line,
                keyword.column,
            )
        return f"{values[keyword.text]} : i32"
    if kind == "unit":
        return None
    if kind == "keyword":  # a bit-enum keyword (`local`, `local|global_read`), kept as a string
        words = [cursor.take().text]
        while cursor.at("|"):
            cursor.pos += 1
            words.append(cursor.take().text)
        return '"' + "|".join(words) + '"'
    if kind == "i32":
        return f"{cursor.take().text} : i32"
    if kind == "attribute":  # a whole attribute, `#tt.cache_policy<cache_modifier = cg, ...>`
        start = cursor.pos
        cursor.take()
        depth = 0
        while cursor.peek() is not None and (depth or cursor.at("<")):
            depth += {"<": 1, ">": -1}.get(cursor.take().text, 0)
        return cursor.span(start, cursor.pos)
    if kind == "i64array":  # `[0, 16]`: a DenseI64ArrayAttr in its short form
        start = cursor.pos
        while not cursor.at("]"):
            cursor.take()
        cursor.take()
        inner = cursor.span(start, cursor.pos)[1:-1].strip()
        return f"array<i64: {inner}>" if inner else "array<i64>"
    if kind == "i32list":
        numbers = []
        while cursor.at_kind("number"):
            numbers.append(cursor.take().text)
            if cursor.at(","):
                cursor.pos += 1
        return f"array<i32: {', '.join(numbers)}>"
    return cursor.take().text


def _parse_ref(cursor: _Cursor, entry: OpFormat, name: str, parsed: Parsed) -> None:
    kind = entry.kind_of(name)
    if not kind:
        value = _parse_attribute(cursor, name, entry.attributes.get(name, "plain"))
        parsed.attributes.append((name, value if value is not None else "unit"))
        return
    values: list[str] = []
    while True:
        token = cursor.peek()
        if token is None or token.kind != "value":
            if kind == "variadic" and not values:
                break
            raise cursor.error(f"expected a value for '{name}'")
        values.append(cursor.take().text)
        if kind != "variadic":
            break
        following = cursor.tokens[cursor.pos + 1] if cursor.pos + 1 < len(cursor.tokens) else None
        if cursor.at(",") and following is not None and following.kind == "value":
            cursor.pos += 1
            continue
        break
    parsed.operands[name] = values


def _parse_functional(cursor: _Cursor, parsed: Parsed) -> None:
    if cursor.take().text != "(":
        raise cursor.error("expected '(' of a functional type")
    operand_types: list[str] = []
    if cursor.peek() is not None and not cursor.at(")"):
        operand_types = cursor.parse_type_list()
    if cursor.take().text != ")":
        raise cursor.error("expected ')' in a functional type")
    if cursor.take().text != "->":
        raise cursor.error("expected '->' in a functional type")
    if cursor.at("("):
        cursor.pos += 1
        if cursor.peek() is None:
            raise cursor.error("expected ')' in a functional type")
        results = [] if cursor.at(")") else cursor.parse_type_list()
        cursor.take()
    else:
        results = [cursor.parse_type()]
    parsed.functional = (operand_types, results)


def _parse_token(cursor: _Cursor, element: _Element, parsed: Parsed) -> None:
    """`[%dep]`, `[]` or nothing: the token result exists exactly when the brackets do."""
    if not cursor.at("["):
        return
    cursor.pos += 1
    dep, token = (child.text for child in element.children)
    if cursor.at_kind("value"):
        parsed.operands[dep] = [cursor.take().text]
    if not cursor.at("]"):
        raise cursor.error("expected ']' closing the async token")
    cursor.pos += 1
    parsed.types[token] = ["!ttg.async.token"]


def _parse_barriers(cursor: _Cursor, element: _Element, parsed: Parsed) -> None:
    """`, %barrier[%pred]`, repeated."""
    barriers, predicates = (child.text for child in element.children)
    parsed.operands[barriers], parsed.operands[predicates] = [], []
    while cursor.at(",") and cursor.pos + 2 < len(cursor.tokens) and cursor.tokens[cursor.pos + 2].text == "[":
        cursor.pos += 1
        parsed.operands[barriers].append(cursor.take().text)
        cursor.pos += 1
        if not cursor.at_kind("value"):
            raise cursor.error("expected the predicate of a barrier")
        parsed.operands[predicates].append(cursor.take().text)
        if not cursor.at("]"):
            raise cursor.error("expected ']' after a barrier's predicate")
        cursor.pos += 1


def result_segments(entry: OpFormat, parsed: Parsed, result_count: int) -> str | None:
    """`resultSegmentSizes` of an op whose format has several optional results (its first
    results are the format's required ones)."""
    if not entry.needs_result_segments():
        return None
    sizes = [
        len(parsed.types.get(name, [])) if raw[-1] in "?*" else 1
        for raw, name in zip(entry.results, entry.result_names())
    ]
    if sum(sizes) != result_count:
        return None
    return f"array<i32: {', '.join(map(str, sizes))}>"


def _parse_elements(elements, cursor: _Cursor, entry: OpFormat, parsed: Parsed) -> None:
    for element in elements:
        if element.kind == "group":
            if _is_present(element.children[0], cursor, entry):
                _parse_elements(element.children, cursor, entry, parsed)
        elif element.kind == "literal":
            token = cursor.peek()
            if token is None or token.text != element.text:
                raise cursor.error(f"expected '{element.text}'" + ("" if token is None else f", found '{token.text}'"))
            cursor.pos += 1
        elif element.kind == "ref":
            _parse_ref(cursor, entry, element.text, parsed)
        elif element.kind == "type":
            _parse_type_element(cursor, element, entry, parsed)
        elif element.kind == "ftype":
            _parse_functional(cursor, parsed)
        elif element.kind == "operand-types":  # the reader takes operand types from their definitions
            cursor.parse_type_list()
        elif element.kind == "custom:Token":
            _parse_token(cursor, element, parsed)
        elif element.kind == "custom:BarriersAndPreds":
            _parse_barriers(cursor, element, parsed)
        elif element.kind == "attrdict" and cursor.at("{"):
            _parse_attribute_dictionary(cursor, parsed)


def _parse_type_element(cursor: _Cursor, element: _Element, entry: OpFormat, parsed: Parsed) -> None:
    """`type($name)`: one type, a list for a variadic, none for an absent operand."""
    kind = entry.kind_of(element.text)
    if kind in ("optional", "variadic") and not parsed.operands.get(element.text):
        return
    if kind == "variadic" or f"{element.text}*" in entry.results:
        parsed.types[element.text] = cursor.parse_type_list()
    else:
        parsed.types[element.text] = [cursor.parse_type(element.stripped or "!ttg.memdesc")]


def _parse_attribute_dictionary(cursor: _Cursor, parsed: Parsed) -> None:
    open_index = cursor.pos
    depth, index = 0, open_index
    while True:
        token = cursor.tokens[index]
        depth += 1 if token.text in "([{<" and len(token.text) == 1 else 0
        depth -= 1 if token.text in ")]}>" and len(token.text) == 1 else 0
        if depth == 0:
            break
        index += 1
    parsed.attributes.extend(attribute_entries(cursor.text, list(cursor.tokens[open_index + 1 : index])))
    cursor.pos = index + 1


def parse_custom(entry: OpFormat, text: str, tokens: tuple[Token, ...]) -> Parsed:
    """Read the tokens of one op (after its name, before its location) with `entry`'s format."""
    cursor = _Cursor(text, tokens, entry.name)
    parsed = Parsed()
    _parse_elements(entry.elements, cursor, entry, parsed)
    extra = cursor.peek()
    if extra is not None:
        raise cursor.error(f"unexpected '{extra.text}'")
    return parsed


# -- printing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class GenericOp:
    """An op in generic form, split into what a format needs."""

    operands: dict[str, list[str]]
    operand_types: dict[str, list[str]]
    result_types: dict[str, list[str]]
    all_operand_types: list[str]
    all_result_types: list[str]
    attributes: dict[str, str | None]


def _enum_keyword(kind: str, value: str) -> str:
    number = int(value.split(":")[0].strip())
    for keyword, code in ENUMS[kind[5:]].items():
        if code == number:
            return keyword
    raise ValueError(f"no {kind[5:]} keyword for {number}")


def _print_attribute(kind: str, value: str | None) -> str:
    if kind == "unit":
        return ""
    if value is None:
        raise ValueError(f"a {kind} attribute has no value")
    if kind.startswith("enum:"):
        return _enum_keyword(kind, value)
    if kind == "keyword":
        return value.strip('"')
    if kind == "i32":
        return value.split(":")[0].strip()
    if kind == "i32list":
        return value[value.index(":") + 1 :].rstrip(">").strip()
    if kind == "i64array":
        return "[" + (value[value.index(":") + 1 :].rstrip(">").strip() if ":" in value else "") + "]"
    return value


def _strip_prefix(type_text: str, prefix: str) -> str:
    return type_text[len(prefix) :] if type_text.startswith(prefix + "<") else type_text


def _anchor_present(element: _Element, entry: OpFormat, op: GenericOp) -> bool:
    anchors = [c for c in element.children if c.anchor] or [element.children[0]]
    anchor = anchors[0]
    if anchor.kind in ("ref", "type") and entry.kind_of(anchor.text):
        return bool(op.operands.get(anchor.text))
    if anchor.kind == "ref":
        return anchor.text in op.attributes
    if anchor.kind == "type":
        return bool(op.result_types.get(anchor.text))
    return True


def _print_elements(elements, entry: OpFormat, op: GenericOp, used: set[str], out: list[str]) -> None:
    for element in elements:
        if element.kind == "group":
            if _anchor_present(element, entry, op):
                _print_elements(element.children, entry, op, used, out)
        elif element.kind == "literal":
            out.append(_Literal(element.text))
        elif element.kind == "ref" and entry.kind_of(element.text):
            # an empty variadic outside an optional group still gets its space (`amdg.async_tdm_wait  {num = 0}`)
            out.append(", ".join(op.operands.get(element.text, [])) or _Empty())
        elif element.kind == "ref":
            used.add(element.text)
            out.append(_print_attribute(entry.attributes.get(element.text, "plain"), op.attributes[element.text]))
        elif element.kind == "type":
            types = op.operand_types.get(element.text) or op.result_types.get(element.text) or []
            if element.stripped:
                types = [_strip_prefix(t, element.stripped) for t in types]
            # the type of an absent optional operand (or of none) still gets its space, as MLIR prints it
            out.append(", ".join(types) or (_Empty() if entry.kind_of(element.text) else ""))
        elif element.kind == "operand-types":
            out.append(", ".join(op.all_operand_types))
        elif element.kind == "ftype":
            results = op.all_result_types
            shown = results[0] if len(results) == 1 else f"({', '.join(results)})"
            out.append(f"({', '.join(op.all_operand_types)}) -> {shown}")
        elif element.kind.startswith("custom:"):
            glued = _print_custom_element(element, op)
            if glued:
                out[-1] = out[-1] + glued
        elif element.kind == "attrdict":
            rest = [(k, v) for k, v in op.attributes.items() if k not in used and k not in _SEGMENTS]
            if rest:
                out.append("{" + ", ".join(k if v is None else f"{k} = {v}" for k, v in rest) + "}")


_SEGMENTS = ("operandSegmentSizes", "resultSegmentSizes")


def _print_custom_element(element: _Element, op: GenericOp) -> str:
    first, second = (child.text for child in element.children)
    if element.kind == "custom:Token":
        return f"[{', '.join(op.operands.get(first, []))}]" if op.result_types.get(second) else ""
    pairs = zip(op.operands.get(first, []), op.operands.get(second, []))
    return "".join(f", {barrier}[{predicate}]" for barrier, predicate in pairs)


class _Literal(str):
    """A literal of the format (spaced the way MLIR's generated printers space them)."""


class _Empty(str):
    """An empty operand list: MLIR prints the space before it, and the one after."""


def _join(pieces: list[str]) -> str:
    """MLIR's spacing (OpFormatGen): no space before a one-character `<>(){}[],` literal, unless
    the literal before it was punctuation (then only `>)}],` go without one); none after `<({[`."""
    out = ""
    space_next = False
    last_was_punctuation = False
    forced = False  # after an empty operand list: a space whatever comes next
    for piece in pieces:
        if isinstance(piece, _Empty):
            out += " " if out and space_next else ""
            forced = space_next = True
            continue
        if not piece and not isinstance(piece, _Literal):
            continue
        if forced:
            out, forced = out + " ", False
            space_next = False
        if isinstance(piece, _Literal):
            single = len(piece) == 1 or piece == "->"
            tight = ">)}]," if last_was_punctuation else "<>(){}[],"
            if out and space_next and not (single and piece[0] in tight):
                out += " "
            space_next = not (len(piece) == 1 and piece in "<({[")
            last_was_punctuation = not (piece[0] == "_" or piece[0].isalpha())
        else:
            if out and space_next:
                out += " "
            space_next, last_was_punctuation = True, False
        out += piece
    return out


def print_custom(entry: OpFormat, op: GenericOp) -> str:
    """The custom syntax of `op` (everything after the op name, without the location)."""
    out: list[str] = []
    used = _format_attributes(entry.elements, entry)  # attr-dict leaves out what the format spells
    _print_elements(entry.elements, entry, op, used, out)
    return _join(out)


def _format_attributes(elements, entry: OpFormat) -> set[str]:
    names: set[str] = set()
    for element in elements:
        if element.kind == "group":
            names |= _format_attributes(element.children, entry)
        elif element.kind == "ref" and not entry.kind_of(element.text):
            names.add(element.text)
    return names
