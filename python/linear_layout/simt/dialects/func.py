"""The `func` ops: `func.return` ends a `func.func` kernel.

Ops: return.
"""

from __future__ import annotations

from ..machine import terminator

terminator("func.return")
