"""Figures of an AMDGCN kernel, to compare ours with Triton's: instructions, global access widths
(flat, global and buffer), atomics, `s_barrier`s, cross-lane operations and LDS bytes.

    >>> amdgcn_stats("\\t.type k,@function\\nk:\\n\\tglobal_load_dwordx4 v[0:3], v[4:5], off\\n\\ts_barrier\\n\\ts_endpgm\\n"
    ...              ".Lfunc_end0:\\n\\t.amdhsa_group_segment_fixed_size 512\\n")
    AmdgcnStats(instructions=3, global_loads=(128,), global_stores=(), atomics=0, barriers=1, cross_lane=0, lds_bytes=512)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["AmdgcnStats", "amdgcn_stats", "tritons_codegen"]

#: A global memory access (flat, global or buffer) and its width suffix.
_ACCESS = re.compile(r"^(?:flat|global|buffer)_(load|store)_(dwordx[234]|dword|ubyte|sbyte|ushort|sshort|byte|short)\b")
_BITS = {"dword": 32, "dwordx2": 64, "dwordx3": 96, "dwordx4": 128, "ubyte": 8, "sbyte": 8, "byte": 8}
_ATOMIC = re.compile(r"^(?:flat|global|buffer)_atomic_")
#: Cross-lane data movement: LDS permutes and swizzles, DPP, and lane reads/writes.
_CROSS_LANE = re.compile(
    r"^(?:ds_bpermute|ds_permute|ds_swizzle|v_readlane|v_writelane|v_permlane)|_dpp\b|\b(?:row_|quad_perm|row_bcast)"
)
_LDS = re.compile(r"\.amdhsa_group_segment_fixed_size\s+(\d+)")


@dataclass(frozen=True)
class AmdgcnStats:
    """`global_loads`/`global_stores`: the width in bits of each global access instruction, sorted;
    `lds_bytes`: the static LDS of every kernel (`.amdhsa_group_segment_fixed_size`)."""

    instructions: int
    global_loads: tuple[int, ...]
    global_stores: tuple[int, ...]
    atomics: int
    barriers: int
    cross_lane: int
    lds_bytes: int


def _instructions(asm: str) -> list[str]:
    """The instructions of every function body: from its label (a `.type NAME,@function`) to its
    `.Lfunc_end`, the lines that are neither directives, labels nor comments (so not the
    kernel descriptors and the metadata that follow)."""
    functions = set(re.findall(r"^\s*\.type\s+([\w.$]+),@function", asm, re.MULTILINE))
    found, inside = [], False
    for line in asm.splitlines():
        text = line.split(";", 1)[0].strip()
        if text.endswith(":") and text[:-1] in functions:
            inside = True
            continue
        if text.startswith(".Lfunc_end"):
            inside = False
        if inside and text and not text.startswith(".") and not text.endswith(":"):
            found.append(text)
    return found


def _width(kind: str) -> int:
    return _BITS.get(kind, 16)  # ushort, sshort, short


def amdgcn_stats(asm: str) -> AmdgcnStats:
    instructions = _instructions(asm)
    loads, stores = [], []
    for text in instructions:
        match = _ACCESS.match(text)
        if match:
            (loads if match.group(1) == "load" else stores).append(_width(match.group(2)))
    return AmdgcnStats(
        instructions=len(instructions),
        global_loads=tuple(sorted(loads)),
        global_stores=tuple(sorted(stores)),
        atomics=sum(1 for text in instructions if _ATOMIC.match(text)),
        barriers=sum(1 for text in instructions if text.split()[0] == "s_barrier"),
        cross_lane=sum(1 for text in instructions if _CROSS_LANE.search(text)),
        lds_bytes=sum(int(n) for n in _LDS.findall(asm)),
    )


def tritons_codegen(llvm_ir: str, chip: str = "gfx942") -> str:
    """AMDGCN of LLVM IR for `amdgcn-amd-amdhsa` (`emit_rocdl_llvm`'s) by Triton's own LLVM AMDGPU
    back end, optimised as `triton.compile` does its LLVM IR (`compile_amdgpu`, as `make_amdgcn`):
    the stand-in for `gpu-module-to-binary` where the MLIR build has no AMDGPU target."""
    from triton.backends.amd.compiler import compile_amdgpu, get_amd_codegen_target_triple, get_llvm_flags

    triple = get_amd_codegen_target_triple(chip)
    source = llvm_ir.replace('target triple = "amdgcn-amd-amdhsa"', f'target triple = "{triple}"')
    return compile_amdgpu(
        source,
        triple,
        chip,
        "",
        flags=get_llvm_flags(chip),
        enable_fp_fusion=True,
        disable_optimization=False,
        canonicalize_gep=False,
        disabled_passes="",
        dump_ir=False,
        enable_timing=False,
    )
