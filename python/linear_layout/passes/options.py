"""Pass options: the dataclass fields of a pass or named pipeline, parsed from the command line
(`ll-verify{check-launch=false max-errors=3}`) by their real type hints
(`typing.get_type_hints`): `bool`, `int`, `str`, and any of them `| None` (written `none`)."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, ClassVar, cast

from .pipeline import PipelineError

__all__ = ["Configurable", "option_name"]

_TRUE, _FALSE, _NONE = ("true", "1", ""), ("false", "0"), ("none",)


def option_name(field: dataclasses.Field) -> str:
    return field.name.replace("_", "-")


def _optional(hint: Any) -> tuple[Any, bool]:
    """(the type inside `T | None`, True), or (`hint`, False)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(hint)) == 2:
            return args[0], True
    return hint, False


def _parse(kind: Any, text: str) -> tuple[bool, object]:
    """(parsed, value) of `text` as `kind`."""
    if kind is bool:
        lowered = text.lower()
        return (True, True) if lowered in _TRUE else (True, False) if lowered in _FALSE else (False, None)
    if kind is int:
        try:
            return True, int(text, 0)
        except ValueError:
            return False, None
    if kind is str:
        return True, text.strip("\"'")
    raise TypeError(f"option type {kind!r} is not supported (bool, int, str, optionally | None)")


def _parse_option_value(pass_name: str, field: dataclasses.Field, hint: Any, text: str) -> object:
    kind, optional = _optional(hint)
    if optional and text.lower() in _NONE:
        return None
    parsed, value = _parse(kind, text)
    if parsed:
        return value
    expected = f"{kind.__name__} or none" if optional else kind.__name__
    raise PipelineError(
        f"bad value '{text}' for option '{option_name(field)}' of pass '{pass_name}' (expected {expected})"
    )


class Configurable:
    """Options from the command line: the dataclass fields of a pass or pipeline."""

    argument: ClassVar[str]
    summary: ClassVar[str]

    @classmethod
    def options(cls) -> list[tuple[str, object, str]]:
        """(command-line name, default, help) of each option."""
        return [(option_name(f), f.default, f.metadata.get("help", "")) for f in dataclasses.fields(cast(Any, cls))]

    @classmethod
    def from_options(cls, text: str):
        """The pass configured by `text`, the inside of `{...}` (`a=1 b=true`)."""
        fields = {option_name(f): f for f in dataclasses.fields(cast(Any, cls))}
        hints = typing.get_type_hints(cls)
        values = {}
        for item in text.split():
            name, _, value = item.partition("=")
            field = fields.get(name)
            if field is None:
                known = ", ".join(fields) or "none"
                raise PipelineError(f"unknown option '{name}' for pass '{cls.argument}' (options: {known})")
            values[field.name] = _parse_option_value(cls.argument, field, hints[field.name], value)
        return cls(**values)
