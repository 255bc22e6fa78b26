"""NVPTX targets: the chips LLVM 22's NVPTX back end knows, the PTX ISA version each needs, and
the chip and PTX version each emitted instruction needs.

Pure: no ``mlir`` import. LLVM aborts the process (``LLVM ERROR``) on a chip it does not know, on
a PTX version too old for the chip and on an instruction the chip lacks, so every caller that
hands a chip to LLVM validates it here first.

The table of minimum PTX versions was read from LLVM 22.1.8 itself: ``llc -mtriple=nvptx64
-mcpu=<chip> -mattr=+ptx32`` prints ``Minimum required PTX version is N`` for every chip that
needs more than PTX 3.2 (``tests/test_driver_targets.py`` checks it against ``llc`` again).

Example::

    >>> target = nvptx_target("sm_100a")
    >>> (target.chip, target.sm, target.min_ptx)
    ('sm_100a', 100, 86)
    >>> ptx_features(target, ["gpu.shuffle"])
    '+ptx86'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "AMDGPU_CHIPS",
    "INSTRUCTION_REQUIREMENTS",
    "NVPTX_CHIPS",
    "PTX_VERSIONS",
    "AmdgpuTarget",
    "TargetError",
    "amdgpu_target",
    "hip_chip",
    "is_amdgpu_chip",
    "lowering_chip",
    "nvptx_target",
    "ptx_features",
    "target_chip",
]

#: chip -> minimum PTX ISA version, as ``major * 10 + minor`` (LLVM 22.1.8's NVPTX processors).
NVPTX_CHIPS: dict[str, int] = {
    "sm_20": 32,
    "sm_21": 32,
    "sm_30": 32,
    "sm_32": 40,
    "sm_35": 32,
    "sm_37": 41,
    "sm_50": 40,
    "sm_52": 41,
    "sm_53": 42,
    "sm_60": 50,
    "sm_61": 50,
    "sm_62": 50,
    "sm_70": 60,
    "sm_72": 61,
    "sm_75": 63,
    "sm_80": 70,
    "sm_86": 71,
    "sm_87": 74,
    "sm_88": 90,
    "sm_89": 78,
    "sm_90": 78,
    "sm_90a": 80,
    "sm_100": 86,
    "sm_100a": 86,
    "sm_100f": 88,
    "sm_101": 86,
    "sm_101a": 86,
    "sm_101f": 88,
    "sm_103": 88,
    "sm_103a": 88,
    "sm_103f": 88,
    "sm_110": 90,
    "sm_110a": 90,
    "sm_110f": 90,
    "sm_120": 87,
    "sm_120a": 87,
    "sm_120f": 88,
    "sm_121": 88,
    "sm_121a": 88,
    "sm_121f": 88,
}

#: The PTX ISA versions LLVM 22.1.8 accepts as ``+ptxNN`` features.
PTX_VERSIONS: tuple[int, ...] = (
    32,
    40,
    41,
    42,
    43,
    50,
    60,
    61,
    62,
    63,
    64,
    65,
    70,
    71,
    72,
    73,
    74,
    75,
    76,
    77,
    78,
    80,
    81,
    82,
    83,
    84,
    85,
    86,
    87,
    88,
    90,
)


@dataclass(frozen=True)
class Requirement:
    """What one MLIR op needs once it is PTX: the instruction, its oldest chip and PTX version."""

    instruction: str
    min_sm: int
    min_ptx: int


#: MLIR op (as the lowering emits it) -> the PTX instruction it becomes and what that needs
#: (PTX ISA: ``shfl.sync`` sm_30 / PTX 6.0, ``ldmatrix`` sm_75 / PTX 6.5, ``stmatrix`` sm_90 / PTX 7.8).
INSTRUCTION_REQUIREMENTS: dict[str, Requirement] = {
    "gpu.shuffle": Requirement("shfl.sync", 30, 60),
    "nvvm.shfl.sync": Requirement("shfl.sync", 30, 60),
    "nvvm.ldmatrix": Requirement("ldmatrix", 75, 65),
    "nvvm.stmatrix": Requirement("stmatrix", 90, 78),
}


class TargetError(ValueError):
    """An unknown chip, a bad PTX feature, or an instruction the chip does not have."""


@dataclass(frozen=True)
class NvptxTarget:
    """A validated chip: its name, its SM number (``sm_100a`` -> 100) and its minimum PTX version."""

    chip: str
    sm: int
    min_ptx: int


def _known_chips() -> str:
    return ", ".join(NVPTX_CHIPS)


def nvptx_target(chip: object) -> NvptxTarget:
    """The target for ``chip``; a :class:`TargetError` listing the known chips otherwise."""
    if not isinstance(chip, str) or chip not in NVPTX_CHIPS:
        raise TargetError(f"unknown NVPTX chip {chip!r}; known chips: {_known_chips()}")
    sm = int(chip[3:].rstrip("af"))
    return NvptxTarget(chip, sm, NVPTX_CHIPS[chip])


def _parse_ptx_feature(features: str) -> int:
    match = re.fullmatch(r"\+ptx(\d+)", features.strip())
    if match is None or int(match.group(1)) not in PTX_VERSIONS:
        known = ", ".join(f"+ptx{version}" for version in PTX_VERSIONS)
        raise TargetError(f"unsupported PTX features '{features}'; give one of {known}")
    return int(match.group(1))


def _check_instructions(target: NvptxTarget, op_names: Iterable[str]) -> int:
    """The PTX version the ops need; a TargetError for an instruction the chip lacks."""
    needed = 0
    for name in sorted(set(op_names) & INSTRUCTION_REQUIREMENTS.keys()):
        requirement = INSTRUCTION_REQUIREMENTS[name]
        if target.sm < requirement.min_sm:
            raise TargetError(
                f"{name} becomes {requirement.instruction}, which needs sm_{requirement.min_sm} "
                f"or newer; the target is {target.chip}"
            )
        needed = max(needed, requirement.min_ptx)
    return needed


def ptx_features(target: NvptxTarget, op_names: Iterable[str] = (), features: str | None = None) -> str:
    """The ``+ptxNN`` feature string for compiling ops named ``op_names`` for ``target``.

    Formula: ``max(target.min_ptx, requirement of every op)``; an explicit ``features`` must be at
    least that. Requires: ``target`` from :func:`nvptx_target`. Postcondition: LLVM accepts the
    chip with the returned features and can select every listed op.
    """
    needed = max(target.min_ptx, _check_instructions(target, op_names))
    if features is None:
        return f"+ptx{needed}"
    given = _parse_ptx_feature(features)
    if given < needed:
        raise TargetError(
            f"PTX features '{features}' are too old: {target.chip} and the ops used need at least +ptx{needed}"
        )
    return f"+ptx{given}"


# ---------------------------------------------------------------------------- AMDGPU

#: AMD chips the lowering targets (the ones Triton 3.9's HIP back end compiles for) -> their
#: wavefront size: 64 lanes on CDNA (gfx9), 32 on RDNA (gfx10+), as Triton's `GPUTarget.warp_size`.
AMDGPU_CHIPS: dict[str, int] = {
    "gfx908": 64,
    "gfx90a": 64,
    "gfx942": 64,
    "gfx950": 64,
    "gfx1030": 32,
    "gfx1100": 32,
    "gfx1101": 32,
    "gfx1200": 32,
    "gfx1201": 32,
    "gfx1250": 32,  # Triton 3.9's gluon TDM / cluster chip (tests/ttgir_corpus/*.gfx1250.ttgir)
}


@dataclass(frozen=True)
class AmdgpuTarget:
    """A validated AMD chip: its name (``gfx942``) and its wavefront size (lanes per warp)."""

    chip: str
    wave_size: int


def is_amdgpu_chip(chip: object) -> bool:
    """Whether ``chip`` names an AMD chip of :data:`AMDGPU_CHIPS`.

    >>> is_amdgpu_chip("gfx942"), is_amdgpu_chip("sm_90"), is_amdgpu_chip(None)
    (True, False, False)
    """
    return isinstance(chip, str) and chip in AMDGPU_CHIPS


def amdgpu_target(chip: object) -> AmdgpuTarget:
    """The AMD target for ``chip``; a :class:`TargetError` listing the known chips otherwise.

    >>> amdgpu_target("gfx942")
    AmdgpuTarget(chip='gfx942', wave_size=64)
    """
    if not is_amdgpu_chip(chip):
        raise TargetError(f"unknown AMDGPU chip {chip!r}; known chips: {', '.join(AMDGPU_CHIPS)}")
    assert isinstance(chip, str)  # is_amdgpu_chip checked it
    return AmdgpuTarget(chip, AMDGPU_CHIPS[chip])


def lowering_chip(chip: object) -> str:
    """``chip`` checked as a target of the lowering: an NVPTX chip or an AMD chip; otherwise a
    :class:`TargetError` naming ``chip`` and listing the known chips of both families (the
    lowering accepts either, whatever the name looks like).

    >>> lowering_chip("gfx942"), lowering_chip("sm_80")
    ('gfx942', 'sm_80')
    >>> lowering_chip("gfx9999")
    Traceback (most recent call last):
    ...
    linear_layout.core.targets.TargetError: unknown chip 'gfx9999'; known NVIDIA chips: sm_20, ...
    """
    if is_amdgpu_chip(chip) or (isinstance(chip, str) and chip in NVPTX_CHIPS):
        assert isinstance(chip, str)
        return chip
    raise TargetError(
        f"unknown chip {chip!r}; known NVIDIA chips: {_known_chips()}; known AMD chips: {', '.join(AMDGPU_CHIPS)}"
    )


def target_chip(ttg_target: object) -> str | None:
    """The chip a TTGIR module's ``ttg.target`` names: ``"cuda:N"`` -> ``"sm_N"`` (one of
    :data:`NVPTX_CHIPS`), ``"hip:NAME"`` -> ``"NAME"`` (one of :data:`AMDGPU_CHIPS`); None for no
    target (None). Anything else -- another form, an unknown NVIDIA or AMD chip -- is a
    :class:`TargetError` (one line, naming the target and the forms accepted): a module is never
    lowered or costed for a chip other than the one it names.

    >>> target_chip("cuda:80"), target_chip("hip:gfx942"), target_chip(None)
    ('sm_80', 'gfx942', None)
    >>> target_chip("hip:gfx9999")
    Traceback (most recent call last):
    ...
    linear_layout.core.targets.TargetError: unknown ttg.target 'hip:gfx9999': known AMD chips: gfx908, ...
    """
    if ttg_target is None:
        return None
    text = ttg_target if isinstance(ttg_target, str) else ""
    vendor, _, name = text.partition(":")
    if vendor == "cuda" and name.isdigit() and f"sm_{name}" in NVPTX_CHIPS:
        return f"sm_{name}"
    if vendor == "hip" and is_amdgpu_chip(name):
        return name
    if vendor == "cuda":
        known = ", ".join(f"cuda:{chip[3:]}" for chip in NVPTX_CHIPS if chip[3:].isdigit())
        raise TargetError(f"unknown ttg.target {ttg_target!r}: known NVIDIA targets: {known}")
    if vendor == "hip":
        raise TargetError(f"unknown ttg.target {ttg_target!r}: known AMD chips: {', '.join(AMDGPU_CHIPS)}")
    raise TargetError(
        f'unknown ttg.target {ttg_target!r}: give "cuda:N" (e.g. "cuda:80") or "hip:CHIP" (e.g. "hip:gfx942")'
    )


def hip_chip(ttg_target: str | None) -> str | None:
    """The AMD chip of a TTGIR module's ``ttg.target`` (``"hip:gfx942"`` -> ``"gfx942"``); None
    for an NVIDIA target or none; a :class:`TargetError` for a target :func:`target_chip` does not
    know (an unknown AMD chip is never lowered as NVIDIA code).

    >>> hip_chip("hip:gfx942"), hip_chip("cuda:90"), hip_chip(None)
    ('gfx942', None, None)
    """
    chip = target_chip(ttg_target)
    return chip if is_amdgpu_chip(chip) else None
