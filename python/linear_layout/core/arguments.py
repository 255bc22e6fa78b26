"""Argument checks at the public API's boundary: one place for the wording of every TypeError and
ValueError a caller gets for an argument of the wrong type or outside its range.

Pure (no ``mlir``). Each ``require_*`` check is cheap on the valid path (an exact ``type(...) is``
test first) and, on the invalid one, raises one exception whose message names the function, the
argument, what it expects and what it got::

    >>> require_name(3, "LinearLayout.has_in_dim", "name")
    Traceback (most recent call last):
    ...
    TypeError: LinearLayout.has_in_dim: argument 'name' must be a dimension name (str), got int 3

Requires: ``where`` is the public function's qualified name, ``argument`` its parameter's name.
Postcondition: the returned value is the argument converted to its plain Python type.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, TypeGuard

import numpy as np

__all__ = [
    "check_index_array",
    "index_out_of_range",
    "require_bool",
    "require_int",
    "require_ints",
    "require_name",
    "require_optional_name",
    "require_names",
    "require_sequence",
    "require_str",
    "is_sequence",
    "short",
    "type_name",
]


def type_name(value: object) -> str:
    """The name of ``value``'s type, for messages (``int``, ``NoneType``, ``ndarray``)."""
    return type(value).__name__


def short(value: object) -> str:
    """A bounded repr for error messages: depth- and length-limited (a deeply nested list must not recurse)."""
    return reprlib.repr(value)[:60]


def _got(value: object) -> str:
    return f"got {type_name(value)} {short(value)}"


def require_name(value: object, where: str, argument: str) -> str:
    """``value`` as a dimension name: a ``str`` (a TypeError naming ``argument`` otherwise)."""
    if type(value) is str or isinstance(value, str):
        return str(value)
    raise TypeError(f"{where}: argument '{argument}' must be a dimension name (str), {_got(value)}")


def require_optional_name(value: object, where: str, argument: str) -> str | None:
    """``value`` as a dimension name or ``None``."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    raise TypeError(f"{where}: argument '{argument}' must be a dimension name (str) or None, {_got(value)}")


def require_int(value: object, where: str, argument: str, minimum: int | None = None) -> int:
    """``value`` as a plain ``int``: a Python or numpy integer, never a bool or a float (TypeError),
    and at least ``minimum`` when that is given (ValueError)."""
    if type(value) is not int:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            kind = "a finite integer" if isinstance(value, float) and not math.isfinite(value) else "an integer"
            raise TypeError(f"{where}: argument '{argument}' must be {kind}, {_got(value)}")
        value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{where}: argument '{argument}' must be at least {minimum}, got {value}")
    return value


def require_str(value: object, where: str, argument: str, what: str) -> str:
    """``value`` as a ``str`` (``what`` names what it holds: "TTGIR text"; a TypeError otherwise)."""
    if isinstance(value, str):
        return value
    raise TypeError(f"{where}: argument '{argument}' must be {what} (str), {_got(value)}")


def require_bool(value: object, where: str, argument: str) -> bool:
    """``value`` as a ``bool`` (``True``/``False`` or a numpy bool; a TypeError otherwise)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{where}: argument '{argument}' must be a bool, {_got(value)}")


def is_sequence(value: object) -> TypeGuard[Iterable[Any]]:
    """Whether ``value`` is an ordered collection of items: any iterable but a string, bytes, a
    mapping or a set (whose order is not the caller's)."""
    if type(value) is tuple or type(value) is list:
        return True
    if isinstance(value, np.ndarray):
        return value.ndim > 0  # a 0-d array is a scalar: iterating it raises
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping, AbstractSet))


def require_sequence(value: object, where: str, argument: str, what: str) -> tuple[Any, ...]:
    """``value`` as a tuple (see :func:`is_sequence`; a TypeError saying it must be a sequence of
    ``what`` otherwise)."""
    if type(value) is tuple:
        return value
    if not is_sequence(value):
        raise TypeError(f"{where}: argument '{argument}' must be a sequence of {what}, got {type_name(value)}")
    return tuple(value)


def require_names(value: object, where: str, argument: str) -> tuple[str, ...]:
    """``value`` as a tuple of dimension names (a TypeError naming ``argument`` and the first item
    that is not a ``str`` otherwise)."""
    names = require_sequence(value, where, argument, "dimension names")
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{where}: argument '{argument}' must hold dimension names (str), {_got(name)}")
    return names


def require_ints(value: object, where: str, argument: str) -> tuple[int, ...]:
    """``value`` as a tuple of plain ints (a TypeError naming ``argument`` and the first item that
    is not an integer otherwise)."""
    items = require_sequence(value, where, argument, "integers")
    if all(type(item) is int for item in items):
        return items
    return tuple(require_int(item, where, argument) for item in items)


def index_out_of_range(where: str, name: str, value: int, size: int) -> ValueError:
    """The error for an index outside ``[0, size)`` of dimension ``name`` (the caller raises it)."""
    return ValueError(
        f"{where}: input {name!r} = {short(value)} is out of range for dimension {name!r} of size {size} "
        f"(expected 0 <= {name} < {size})"
    )


def check_index_array(where: str, name: str, values: np.ndarray, size: int) -> None:
    """Every element of the integer array ``values`` lies in ``[0, size)`` (a ValueError naming the
    first one that does not, the dimension and its size)."""
    if values.size == 0:
        return
    low = values.min()
    high = values.max()
    if low < 0:
        raise index_out_of_range(where, name, int(low), size)
    if high >= size:
        raise index_out_of_range(where, name, int(high), size)
