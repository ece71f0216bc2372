"""Frozen JSON values: what hooks, approval and the handler receive as a call's arguments.

After validation, arguments (and intended effects) are frozen so nothing down the pipeline
can rewrite them: objects become :class:`FrozenDict` (a ``dict`` whose mutating methods
raise ``TypeError``) and arrays become tuples. Both still serialize with ``json.dumps`` and
read like the plain values (``args["files"][0]["path"]``). :func:`thaw` makes a detached,
mutable deep copy for renderers and event subscribers.
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["FrozenDict", "freeze", "thaw"]


class FrozenDict(dict[str, Any]):
    """A read-only ``dict``. Being a ``dict`` subclass, it serializes with ``json.dumps``."""

    __slots__ = ()

    def _readonly(self, *_args: Any, **_kwargs: Any) -> NoReturn:
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


def freeze(value: Any) -> Any:
    """A frozen deep copy of a JSON value (dicts → :class:`FrozenDict`, lists → tuples)."""
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, dict):
        frozen = FrozenDict()
        dict.update(frozen, ((key, freeze(item)) for key, item in value.items()))
        return frozen
    if isinstance(value, list | tuple):
        return tuple(freeze(item) for item in value)
    return value


def thaw(value: Any) -> Any:
    """A detached, mutable deep copy of a (frozen or plain) JSON value."""
    if isinstance(value, dict):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(item) for item in value]
    return value
