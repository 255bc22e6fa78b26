"""Conversion planning (pure: never imports ``mlir``).

Modules, each depending only on the ones before it:

* :mod:`.layouts` -- hardware layouts, flattened columns, :class:`PlannerError`;
* :mod:`.banks` -- the bank model, :func:`bank_conflicts`, wavefront counting;
* :mod:`.triton_scratch` -- the model of Triton's scratch choice (:func:`triton_scratch_bytes`);
* :mod:`.swizzle` -- the shared layout: vectorisation and swizzle;
* :mod:`.shared` -- a shared-memory exchange: instructions, offsets, costs (:func:`plan_local_access`);
* :mod:`.in_warp` -- the in-warp exchange: Triton's decision criterion and the shuffle rounds;
* :mod:`.plan` -- the single :func:`plan_conversion`, its :class:`Strategy` and one plan class per strategy;
* :mod:`.floor` -- a plan measured against the bandwidth floor;
* :mod:`.async_copy` -- the copies of an async copy (:func:`plan_async_copy`).
"""

from .banks import BankConflicts, bank_conflicts
from .in_warp import RegisterMap, Round, register_maps
from .layouts import PlannerError
from .plan import STRATEGIES, ConversionPlan, Rejection, Strategy, StrategyPlan, minimal_conversion, plan_conversion
from .shared import Access, Instruction, SharedPlan, plan_local_access
from .triton_scratch import triton_scratch_bytes

__all__ = [
    "STRATEGIES",
    "Access",
    "BankConflicts",
    "ConversionPlan",
    "Instruction",
    "PlannerError",
    "RegisterMap",
    "Rejection",
    "Round",
    "SharedPlan",
    "Strategy",
    "StrategyPlan",
    "bank_conflicts",
    "minimal_conversion",
    "plan_conversion",
    "plan_local_access",
    "register_maps",
    "triton_scratch_bytes",
]
