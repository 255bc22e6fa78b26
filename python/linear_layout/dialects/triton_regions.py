"""How many regions Triton's ops have, as `ll-verify` checks it.

Most Triton ops (`tt`, `ttg`, `ttng`, `amdg`, `nvg`) have no region; Triton's ODS declares one
on a few (`let regions = ...` in TritonOps.td and TritonGPUOps.td) and its verifier refuses any
other count (`'tt.splat' op requires zero regions`). The `tt` ops, `ttng`, `amdg` and the `ttg`
ops the IRDL dialect does not declare are unregistered operations here, which MLIR lets carry any
regions, so an edited TTGIR that gives one a region would otherwise pass:

    tt.func, tt.reduce, tt.scan, tt.map_elementwise, ttg.mask    one region
    ttg.warp_specialize                                          two (default, partitions)
    ttg.warp_specialize.partitions                               any number (one per partition)
    every other op of those dialects                             none

`region_problem(op)` returns the message for a wrong count, or None; `tests/test_ttgir_rules.py`
checks the table against Triton 3.9's own verifier for every op of `ttgir.formats.FORMATS`.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

__all__ = ["TRITON_REGIONS", "RegionCount", "region_problem"]

#: The dialects whose ops Triton defines (as the TTGIR reader names them); `ttg_unregistered`
#: holds the `ttg` ops the IRDL dialect does not declare (`ttg.warp_specialize` is read as
#: `ttg_unregistered.warp_specialize`).
_DIALECTS = ("tt.", "ttg.", "ttng.", "amdg.", "nvg.")
_UNDECLARED_TTG = "ttg_unregistered."


@dataclass(frozen=True)
class RegionCount:
    """Triton's region count of an op: exactly ``count``, or any number when ``variadic``."""

    count: int
    variadic: bool = False

    def accepts(self, regions: int) -> bool:
        return self.variadic or regions == self.count

    def words(self) -> str:
        """Triton's wording of the rule (`requires one region`, `expected 2 regions`)."""
        if self.count == 0:
            return "requires zero regions"
        return "requires one region" if self.count == 1 else f"expected {self.count} regions"


#: Triton 3.9's ops with regions; every other op of its dialects has none.
TRITON_REGIONS: dict[str, RegionCount] = {
    "tt.func": RegionCount(1),
    "tt.reduce": RegionCount(1),
    "tt.scan": RegionCount(1),
    "tt.map_elementwise": RegionCount(1),
    "ttg.mask": RegionCount(1),
    "ttg.warp_specialize": RegionCount(2),
    "ttg.warp_specialize.partitions": RegionCount(0, variadic=True),
}
_NONE = RegionCount(0)


def triton_name(name: str) -> str | None:
    """The Triton name of MLIR op `name` (`ttg_unregistered.mask` -> `ttg.mask`); None for an
    op of another dialect."""
    if name.startswith(_UNDECLARED_TTG):
        return "ttg." + name[len(_UNDECLARED_TTG) :]
    return name if name.startswith(_DIALECTS) else None


def region_problem(op: ir.Operation) -> str | None:
    """Why the Triton op `op` has the wrong number of regions (Triton's words and the count
    found), or None: a right count, or an op of another dialect.

    Formula: ``len(op.regions)`` against ``TRITON_REGIONS.get(name, zero regions)``.
    Example: a generic `"tt.splat"(%p) ({...})` -> "requires zero regions (Triton's tt.splat has
    none), got 1".
    """
    name = triton_name(op.name)
    if name is None:
        return None
    expected = TRITON_REGIONS.get(name, _NONE)
    found = len(op.regions)
    if expected.accepts(found):
        return None
    declared = "none" if expected.count == 0 else f"{expected.count}"
    return f"{expected.words()} (Triton's {name} has {declared}), got {found}"
