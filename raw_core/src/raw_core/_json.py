"""Strict JSON reading: the parser every untrusted JSON document goes through.

``json.loads`` keeps the last of duplicate keys, accepts ``NaN`` and ``Infinity`` (and turns
``1e400`` into infinity), raises ``RecursionError`` on deep nesting and a bare ``ValueError``
on an integer longer than the interpreter converts (4,300 digits by default; converting a
longer one takes time quadratic in its length). This module refuses all of these, and bounds
size and depth, raising :class:`JsonInputError` with a message that says what was found:
whatever the text, no other exception leaves :func:`loads_strict`.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "JsonInputError", "loads_strict"]

MAX_DEPTH = 64

MAX_INT_DIGITS = 4300
"""The longest integer read, in digits: Python's default bound, kept whatever the
interpreter's own setting (``sys.set_int_max_str_digits``) says."""


class JsonInputError(ValueError):
    """The text is not strict JSON, or exceeds a bound."""


def _reject_constant(name: str) -> Any:
    raise JsonInputError(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonInputError(f"the number {text[:40]} is too large for a float")
    return value


def _bounded_int(text: str) -> int:
    digits = len(text) - text.startswith("-")
    if digits > MAX_INT_DIGITS:
        raise JsonInputError(
            f"the integer {text[:20]}... has {digits} digits; the limit is {MAX_INT_DIGITS}"
        )
    try:
        return int(text)
    except ValueError:  # the interpreter's own bound is lower than ours
        raise JsonInputError(f"the integer {text[:20]}... has too many digits") from None


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise JsonInputError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether containers in a parsed value nest deeper than ``limit`` (iterative walk)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


# Built once: ``json.loads`` with options builds a decoder per call.
_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs,
    parse_constant=_reject_constant,
    parse_float=_finite_float,
    parse_int=_bounded_int,
)


def loads_strict(
    text: str | bytes, *, max_bytes: int | None = None, max_depth: int = MAX_DEPTH
) -> Any:
    """Parse ``text`` as strict JSON.

    Refuses duplicate keys, ``NaN``/``Infinity``, numbers too large for a float, integers
    longer than :data:`MAX_INT_DIGITS` digits, a byte order mark, text after the value,
    bytes that are not UTF-8, nesting deeper than ``max_depth`` and, when ``max_bytes`` is
    given, input longer than that many UTF-8 bytes. Raises only :class:`JsonInputError`.
    """
    if isinstance(text, bytes):
        size = len(text)
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonInputError(f"not UTF-8: {exc.reason} at byte {exc.start}") from None
    elif max_bytes is not None and len(text) * 4 > max_bytes:  # else it fits: 4 bytes a char
        size = len(text.encode("utf-8", "surrogatepass"))
    else:
        size = 0
    if max_bytes is not None and size > max_bytes:
        raise JsonInputError(f"{size} bytes is over the limit of {max_bytes} bytes")
    if text.startswith("\ufeff"):
        raise JsonInputError("unexpected byte order mark (U+FEFF) at line 1 column 1")
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise JsonInputError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise JsonInputError(f"nested deeper than {max_depth} levels") from None
    # Nesting is at most the number of opening brackets: most texts need no walk.
    if (
        isinstance(value, dict | list)
        and text.count("[") + text.count("{") > max_depth
        and _depth_exceeds(value, max_depth)
    ):
        raise JsonInputError(f"nested deeper than {max_depth} levels")
    return value
