"""Conversion planning (pure: never imports ``mlir``)."""

from .shared import BankConflicts, ConversionPlan, bank_conflicts, plan_conversion, plan_local_access, triton_scratch_bytes

__all__ = ["BankConflicts", "ConversionPlan", "bank_conflicts", "plan_conversion", "plan_local_access",
           "triton_scratch_bytes"]
