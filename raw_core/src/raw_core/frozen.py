"""Frozen JSON values: what hooks, approval and the handler receive as a call's arguments.

After validation, arguments (and intended effects) are frozen so nothing down the pipeline
can rewrite them: objects become :class:`FrozenDict` (a ``dict`` whose mutating methods
raise ``TypeError``) and arrays become tuples. Both still serialize with ``json.dumps`` and
read like the plain values (``args["files"][0]["path"]``). :func:`thaw` makes a detached,
mutable deep copy for renderers and event subscribers.

A ``dict`` subclass can still be changed through ``dict``'s own methods
(``dict.__setitem__(args, ...)``); Python offers no mapping that is both read-only and a
``dict``. The dispatcher therefore also checks, with :func:`fingerprint`, that hooks and
approval left the arguments and effects exactly as validated, and fails the call closed
otherwise.
"""

from __future__ import annotations

import json
from typing import Any, Final, NoReturn

__all__ = ["FrozenDict", "fingerprint", "freeze", "thaw"]


class FrozenDict(dict[str, Any]):
    """A read-only ``dict``. Being a ``dict`` subclass, it serializes with ``json.dumps``."""

    __slots__ = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Only ever made empty (then filled by freeze()): calling __init__ again on a
        # filled mapping would otherwise rewrite it in place.
        if args or kwargs or len(self):
            raise TypeError("tool arguments are frozen: they cannot be changed")
        super().__init__()

    def _readonly(self, *_args: Any, **_kwargs: Any) -> NoReturn:
        raise TypeError("tool arguments are frozen: they cannot be changed")

    def __setattr__(self, name: str, value: Any) -> NoReturn:  # __class__ too
        raise TypeError("tool arguments are frozen: they cannot be changed")

    __setitem__ = _readonly
    __delitem__ = _readonly
    __ior__ = _readonly
    clear = _readonly
    pop = _readonly
    popitem = _readonly
    setdefault = _readonly
    update = _readonly

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, _memo: dict[int, Any]) -> FrozenDict:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (dict(self),))

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"


def _rebuild(items: dict[str, Any]) -> FrozenDict:
    frozen = FrozenDict()
    dict.update(frozen, items)
    return frozen


_SCALARS: Final = frozenset((str, int, float, bool, type(None)))


def freeze(value: Any) -> Any:
    """A frozen deep copy of a JSON value (dicts → :class:`FrozenDict`, lists → tuples)."""
    kind = type(value)
    if kind in _SCALARS or kind is FrozenDict:
        return value
    if kind is dict:  # what a JSON parser makes: plain loops, cheaper than comprehensions
        frozen = _new_frozen(FrozenDict)
        for key, item in value.items():
            _put(frozen, key, item if type(item) in _SCALARS else freeze(item))
        return frozen
    if kind is list or kind is tuple:
        items = []
        for item in value:
            items.append(item if type(item) in _SCALARS else freeze(item))
        return tuple(items)
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, dict):
        frozen = _new_frozen(FrozenDict)
        _fill(frozen, {key: freeze(item) for key, item in value.items()})
        return frozen
    if isinstance(value, list | tuple):
        return tuple(freeze(item) for item in value)
    return value


_new_frozen: Final = dict.__new__
_fill: Final = dict.update
_put: Final = dict.__setitem__


def thaw(value: Any) -> Any:
    """A detached, mutable deep copy of a (frozen or plain) JSON value."""
    if isinstance(value, dict):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(item) for item in value]
    return value


def fingerprint(value: Any) -> str:
    """A canonical text of a JSON value: equal values, equal texts (keys sorted)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
