"""`tt.call` inlined: before a Triton kernel is checked or lowered, each call of a `tt.func` of
the same module is replaced by a copy of the callee's body (its arguments by the call's operands,
its results by the operands of its `tt.return`), and a `tt.func` no call names any more that is
not public (Triton's `noinline` helpers are private) is erased. Triton makes `tt.call` only for
`@triton.jit(noinline=True)` helpers, which take scalars; the body may hold any op the lowering
knows. A call of a function that is not in the module, or has more than one block, is left (then
`check_triton_kernels` names it as an op without a lowering).

    >>> # %r = tt.call @twice_plus(%a, %b) : (i32, i32) -> i32
    >>> # becomes  %0 = arith.muli %a, %c2 ; %r = arith.addi %0, %b   (the body of @twice_plus)
"""

from __future__ import annotations

from mlir import ir

from ..ir.walk import ops_where

__all__ = ["inline_calls"]


def _functions(root: ir.Operation) -> dict[str, ir.Operation]:
    """The `tt.func`s directly under `root`'s body, by symbol name."""
    found = {}
    for op in root.regions[0].blocks[0].operations:
        if op.operation.name == "tt.func":
            found[ir.StringAttr(op.operation.attributes["sym_name"]).value] = op.operation
    return found


def _calls(root: ir.Operation) -> list[ir.Operation]:
    return ops_where(root, lambda op: op.name == "tt.call")


def _callee_name(call: ir.Operation) -> str:
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def _inline(call: ir.Operation, callee: ir.Operation) -> None:
    """Replace `call` by a copy of `callee`'s body."""
    copy = callee.clone(ip=ir.InsertionPoint(call))
    body = copy.regions[0].blocks[0]
    for argument, operand in zip(body.arguments, call.operands):
        argument.replace_all_uses_with(operand)
    operations = list(body.operations)
    for op in operations[:-1]:
        op.operation.move_before(call)
    returned = operations[-1].operation
    for result, value in zip(call.results, returned.operands):
        result.replace_all_uses_with(value)
    call.erase()
    copy.erase()


def inline_calls(root: ir.Operation) -> None:
    """Inline every `tt.call` under `root` (a module) whose callee is a single-block `tt.func`
    of it (calls inside the copied bodies too), then erase the non-public callees left unused.

    Postcondition: no `tt.call` names a function of `root` with one block."""
    functions = _functions(root)
    called: set[str] = set()
    while True:
        calls = [
            call
            for call in _calls(root)
            if _callee_name(call) in functions and len(functions[_callee_name(call)].regions[0].blocks) == 1
        ]
        if not calls:
            break
        for call in calls:
            called.add(_callee_name(call))
            _inline(call, functions[_callee_name(call)])
    remaining = {_callee_name(call) for call in _calls(root)}
    for name in called - remaining:
        function = functions[name]
        visibility = function.attributes.get("sym_visibility")
        if visibility is not None and ir.StringAttr(visibility).value != "public":
            function.erase()
