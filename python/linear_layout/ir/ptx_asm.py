"""The PTX text of predicated global accesses, one place for the lowering that emits it in
`llvm.inline_asm` and the SIMT interpreter that runs exactly these strings.

A masked `tt.load`/`tt.store` of `words` words of `bits` bits each (the access width the axis
info gives, as Triton packs it: 32-bit words, 64-bit for 64-bit elements, one 16- or 8-bit
word for a 16- or 8-bit access) is one predicated
instruction without a branch, as Triton's `LoadStoreOpToLLVM`:

- load: ``mov.b32 $k, <other or 0>;`` per word, then ``@$p ld.global.v4.b32 { $0, .. }, [ $a + 0 ];``
  (operands: the words out, the predicate, the address, the `other` words if any);
- store: ``@$p st.global.v4.b32 [ $a + 0 ], { $0, .. };`` (operands: the words, the predicate, the
  address).

The address is a register plus an immediate byte offset (`[ $a + 16 ]`, as Triton's): the
registers of one thread share one address register, each at its constant offset from it.
`access_of` reads any offset back (`PREDICATED_ACCESSES` lists the forms at offset 0).

Example: ``predicated_store(1, 32)`` is ``("@$1 st.global.b32 [ $2 + 0 ], { $0 };", "r,b,l")``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

#: The (words, bits per word) the predicated accesses come in: at most 128 bits (the widest
#: access before sm_100), several words only of 32 or 64 bits (Triton's packing).
FORMS = ((1, 8), (1, 16), (1, 32), (2, 32), (4, 32), (1, 64), (2, 64))
_CODE = {8: "c", 16: "h", 32: "r", 64: "l"}  # an 8-bit word lives in a 16-bit register


@dataclass(frozen=True)
class PredicatedAccess:
    """One predicated global access: `kind` "load" or "store", `words` x `bits`, for a load
    whether `other` words are operands (else the predicated-off words are 0), and the
    non-negative immediate byte `offset` added to the address operand."""

    kind: str
    words: int
    bits: int
    with_other: bool = False
    offset: int = 0


def _instruction(kind: str, words: int, bits: int) -> str:
    vector = f".v{words}" if words > 1 else ""
    return f"{'ld' if kind == 'load' else 'st'}.global{vector}.b{bits}"


def _registers(first: int, words: int) -> str:
    return "{ " + ", ".join(f"${first + k}" for k in range(words)) + " }"


def predicated_load(words: int, bits: int, with_other: bool, offset: int = 0) -> tuple[str, str]:
    """(asm, constraints) of a predicated load at address + `offset` bytes; operands: predicate
    $words, address $words+1, other words from $words+2."""
    code = _CODE[bits]
    move = max(16, bits)  # PTX has no 8-bit mov: the register is 16 bits
    moves = [f"mov.b{move} ${k}, {f'${words + 2 + k}' if with_other else '0'};" for k in range(words)]
    load = f"@${words} {_instruction('load', words, bits)} {_registers(0, words)}, [ ${words + 1} + {offset} ];"
    constraints = [f"={code}"] * words + ["b", "l"] + ([code] * words if with_other else [])
    return "\n\t".join([*moves, load]), ",".join(constraints)


def predicated_store(words: int, bits: int, offset: int = 0) -> tuple[str, str]:
    """(asm, constraints) of a predicated store at address + `offset` bytes; operands: the words,
    predicate $words, address $words+1."""
    store = f"@${words} {_instruction('store', words, bits)} [ ${words + 1} + {offset} ], {_registers(0, words)};"
    return store, ",".join([_CODE[bits]] * words + ["b", "l"])


def asm_of(access: PredicatedAccess) -> tuple[str, str]:
    if access.kind == "load":
        return predicated_load(access.words, access.bits, access.with_other, access.offset)
    return predicated_store(access.words, access.bits, access.offset)


#: Every predicated access the lowering can emit, by its (asm, constraints).
PREDICATED_ACCESSES: dict[tuple[str, str], PredicatedAccess] = {
    asm_of(access): access
    for words, bits in FORMS
    for access in (
        PredicatedAccess("load", words, bits, False),
        PredicatedAccess("load", words, bits, True),
        PredicatedAccess("store", words, bits),
    )
}


_OFFSET = re.compile(r"\[ (\$\d+) \+ (\d+) \]")


def access_of(asm: str, constraints: str) -> PredicatedAccess | None:
    """The predicated access whose (asm, constraints) `asm_of` gives, at any offset; None for
    any other text. Example: ``access_of(*predicated_store(1, 32, 8)).offset == 8``."""
    found = _OFFSET.search(asm)
    if found is None:
        return None
    access = PREDICATED_ACCESSES.get((_OFFSET.sub(r"[ \1 + 0 ]", asm, count=1), constraints))
    return None if access is None else replace(access, offset=int(found.group(2)))


#: The element sizes (bytes) of the `mad.wide.s32` address steps the lowering emits.
MAD_WIDE_BYTES = (1, 2, 4, 8, 16)


def mad_wide(element_bytes: int) -> tuple[str, str]:
    """(asm, constraints) of one address step as Triton's (`nvptx-mad-wide-opt`): the 64-bit
    pointer ``$2 + sext($1) * element_bytes`` in one instruction, where the stock pipeline's
    `getelementptr` of an i32 index is a `mul.wide.s32` and an `add.s64`. Operands: the i32
    index $1, the pointer $2; the result $0 is the pointer.

    Example: ``mad_wide(4) == ("mad.wide.s32 $0, $1, 4, $2;", "=l,r,l")``."""
    return f"mad.wide.s32 $0, $1, {element_bytes}, $2;", "=l,r,l"


#: Every address step the lowering can emit, by its (asm, constraints): the element bytes.
MAD_WIDES: dict[tuple[str, str], int] = {mad_wide(size): size for size in MAD_WIDE_BYTES}


@dataclass(frozen=True)
class PredicatedAtomic:
    """One predicated global read-modify-write, as Triton's `AtomicRMWOpToLLVM`: `operation`
    (add, max, min, and, or, xor, exch) on a `bits`-bit element of PTX type letter `kind` (u:
    unsigned, s: signed, b: bits, f: float), with memory order `sem` (relaxed, acquire, release,
    acq_rel) at `scope` (cta, gpu, sys): Triton's `sem` and `scope`, kept exactly."""

    operation: str
    kind: str
    bits: int
    sem: str
    scope: str
    predicated: bool = True  # False: every thread updates (no mask), no predicate operand


ATOMIC_OPERATIONS = ("add", "max", "min", "and", "or", "xor", "exch")
ATOMIC_SEMANTICS = ("relaxed", "acquire", "release", "acq_rel")
ATOMIC_SCOPES = ("cta", "gpu", "sys")
_ATOMIC_CODE = {("f", 32): "f", ("f", 64): "d", 32: "r", 64: "l"}


def predicated_atomic(atomic: PredicatedAtomic) -> tuple[str, str]:
    """(asm, constraints) of `atomic`: ``mov.b32 $0, 0;`` then ``@$3 atom.global.gpu.acq_rel.add.u32
    $0, [ $1 + 0 ], $2;`` (operands: the old value out, the address, the value, the predicate; a
    predicated-off thread's old value is 0, as Triton's); without `predicated` (no mask and no
    thread predicate: every thread updates) the bare ``atom...`` on operands $0, $1, $2.

    Example: ``predicated_atomic(PredicatedAtomic("add", "u", 32, "acq_rel", "gpu"))[1] == "=r,l,r,b"``."""
    code = _ATOMIC_CODE.get((atomic.kind, atomic.bits)) or _ATOMIC_CODE[atomic.bits]
    instruction = f"atom.global.{atomic.scope}.{atomic.sem}.{atomic.operation}.{atomic.kind}{atomic.bits}"
    if not atomic.predicated:  # no mask: the bare instruction
        return f"{instruction} $0, [ $1 + 0 ], $2;", f"={code},l,{code}"
    asm = f"mov.b{atomic.bits} $0, 0;\n\t@$3 {instruction} $0, [ $1 + 0 ], $2;"
    return asm, f"={code},l,{code},b"


_ATOMIC = re.compile(
    r"(mov\.b\d+ \$0, 0;\n\t@\$3 )?atom\.global\.(\w+)\.(\w+)\.(\w+)\.([usbf])(32|64) \$0, \[ \$1 \+ 0 \], \$2;"
)


def atomic_of(asm: str, constraints: str) -> PredicatedAtomic | None:
    """The atomic whose (asm, constraints) `predicated_atomic` gives; None for any other text.
    Example: ``atomic_of(*predicated_atomic(a)) == a``."""
    found = _ATOMIC.fullmatch(asm)
    if found is None:
        return None
    guard, scope, sem, operation, kind, bits = found.groups()
    if scope not in ATOMIC_SCOPES or sem not in ATOMIC_SEMANTICS or operation not in ATOMIC_OPERATIONS:
        return None
    atomic = PredicatedAtomic(operation, kind, int(bits), sem, scope, guard is not None)
    return atomic if predicated_atomic(atomic) == (asm, constraints) else None
