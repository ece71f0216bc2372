"""Strict structuring of JSON documents into raw's frozen records, with JSON paths in errors.

One configured :class:`cattrs.Converter` per boundary (``forbid_extra_keys``, detailed
validation), never cattrs' global one. Primitives are checked, never coerced: cattrs would
otherwise turn ``5`` into ``"5"`` for a ``str`` field. Every problem comes back as a
:class:`FieldProblem` whose ``path`` is a JSON path such as ``$.panels[0].id``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)
from cattrs.gen import make_dict_structure_fn

from raw_core._field_error import FieldValueError

__all__ = [
    "FieldProblem",
    "FieldValueError",
    "StructureFailed",
    "json_kind",
    "json_text",
    "make_converter",
    "structure",
]

T = TypeVar("T")


@attrs.frozen(kw_only=True)
class FieldProblem:
    """One rule a document breaks: where (a JSON path) and what was expected."""

    path: str
    message: str


class StructureFailed(ValueError):
    """A document does not fit its record type; ``problems`` lists every finding."""

    def __init__(self, problems: list[FieldProblem]) -> None:
        super().__init__("; ".join(f"{p.path}: {p.message}" for p in problems))
        self.problems = problems


def json_kind(value: Any) -> str:
    """How a JSON value reads in an error message: ``a string``, ``an array``, ``null``..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):  # a frozen array is a tuple
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def json_text(value: Any, limit: int = 120) -> str:
    """A value as an error message quotes it: as JSON (``["a","b"]``, ``true``, ``"x"``),
    never as a Python repr (``['a', 'b']``, ``True``, ``'x'``); cut at ``limit``
    characters. What JSON cannot write (a set, an object) is named by its kind."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return json_kind(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _strict(expected: type, label: str) -> Any:
    def hook(value: Any, _type: Any) -> Any:
        if type(value) is bool and expected is not bool:
            raise ValueError(f"expected {label}, found a boolean")
        if not isinstance(value, expected):
            raise ValueError(f"expected {label}, found {json_kind(value)}")
        return value

    return hook


def _json_object(value: Any, _type: Any) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"expected an object, found {json_kind(value)}")
    return value


def _is_homogeneous_tuple(type_: Any) -> bool:
    args = get_args(type_)
    return get_origin(type_) is tuple and len(args) == 2 and args[1] is Ellipsis


def _tuple_hook_factory(converter: cattrs.Converter) -> Any:
    def factory(type_: Any) -> Any:
        element = get_args(type_)[0]

        def hook(value: Any, _type: Any) -> tuple[Any, ...]:
            if not isinstance(value, list):
                raise ValueError(f"expected an array, found {json_kind(value)}")
            items: list[Any] = []
            errors: list[Exception] = []
            for index, item in enumerate(value):
                try:
                    items.append(converter.structure(item, element))
                except Exception as exc:
                    exc.__notes__ = [
                        *getattr(exc, "__notes__", []),
                        IterableValidationNote(f"index {index}", index, element),
                    ]
                    errors.append(exc)
            if errors:
                raise IterableValidationError("invalid items", errors, type_)
            return tuple(items)

        return hook

    return factory


def _is_literal(type_: Any) -> bool:
    origin: Any = get_origin(type_)
    return origin is Literal


def _literal_hook(value: Any, type_: Any) -> Any:
    allowed = get_args(type_)
    if value not in allowed or type(value) is not type(
        next((a for a in allowed if a == value), value)
    ):
        listed = ", ".join(json.dumps(a) for a in allowed)
        raise ValueError(f"expected one of {listed}, found {json.dumps(value)}")
    return value


def _is_string_mapping(type_: Any) -> bool:
    args = get_args(type_)
    return (
        get_origin(type_) in (dict, Mapping)
        and len(args) == 2
        and args[0] is str
        and args[1] is not Any
    )


def _mapping_hook_factory(converter: cattrs.Converter) -> Any:
    def factory(type_: Any) -> Any:
        value_type = get_args(type_)[1]

        def hook(value: Any, _type: Any) -> dict[str, Any]:
            if not isinstance(value, dict):
                raise ValueError(f"expected an object, found {json_kind(value)}")
            items: dict[str, Any] = {}
            errors: list[Exception] = []
            for key, item in value.items():
                try:
                    items[key] = converter.structure(item, value_type)
                except Exception as exc:
                    exc.__notes__ = [
                        *getattr(exc, "__notes__", []),
                        IterableValidationNote(f"key {key!r}", key, value_type),
                    ]
                    errors.append(exc)
            if errors:
                raise IterableValidationError("invalid values", errors, type_)
            return items

        return hook

    return factory


def _attrs_hook_factory(converter: cattrs.Converter) -> Any:
    def factory(cls: Any) -> Any:
        inner = make_dict_structure_fn(
            cls, converter, _cattrs_forbid_extra_keys=True, _cattrs_detailed_validation=True
        )

        def hook(value: Any, type_: Any) -> Any:
            if not isinstance(value, dict):
                raise ValueError(f"expected an object, found {json_kind(value)}")
            return inner(value, type_)

        return hook

    return factory


def make_converter() -> cattrs.Converter:
    """A converter that rejects unknown keys and never coerces primitive types."""
    converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
    converter.register_structure_hook_factory(attrs.has, _attrs_hook_factory(converter))
    converter.register_structure_hook_factory(_is_string_mapping, _mapping_hook_factory(converter))
    converter.register_structure_hook_factory(_is_homogeneous_tuple, _tuple_hook_factory(converter))
    converter.register_structure_hook(str, _strict(str, "a string"))
    converter.register_structure_hook(int, _strict(int, "an integer"))
    converter.register_structure_hook(bool, _strict(bool, "a boolean"))
    converter.register_structure_hook(float, _strict(float | int, "a number"))  # type: ignore[arg-type]
    converter.register_structure_hook_func(lambda t: t == Mapping[str, Any], _json_object)
    converter.register_structure_hook_func(_is_literal, _literal_hook)
    return converter


def _key_path(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if isinstance(key, str) and key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key)}]"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return "required field is missing"
    if isinstance(exc, ValueError | TypeError) and exc.args:
        text = str(exc.args[0])
        if text.startswith("Structuring ") or "is not a valid" in text:
            return text
        return text
    return str(exc) or type(exc).__name__


def _walk(exc: BaseException, path: str, out: list[FieldProblem]) -> None:
    if isinstance(exc, FieldValueError):
        out.append(FieldProblem(path=f"{path}.{exc.name}", message=exc.message))
        return
    if isinstance(exc, ForbiddenExtraKeysError):
        for key in sorted(exc.extra_fields):
            out.append(FieldProblem(path=_key_path(path, key), message="unknown field"))
        return
    if isinstance(exc, ClassValidationError):
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            _walk(sub, _key_path(path, note.name), out)
        for sub in without:
            _walk(sub, path, out)
        return
    if isinstance(exc, IterableValidationError):
        iter_with, iter_without = exc.group_exceptions()
        for sub, inote in iter_with:
            _walk(sub, _key_path(path, inote.index), out)
        for sub in iter_without:
            _walk(sub, path, out)
        return
    if isinstance(exc, BaseExceptionGroup):
        for member in exc.exceptions:
            _walk(member, path, out)
        return
    out.append(FieldProblem(path=path, message=_describe(exc)))


def structure(converter: cattrs.Converter, data: Any, cls: type[T], *, root: str = "$") -> T:
    """Structure ``data`` into ``cls``; on failure raise :class:`StructureFailed`."""
    if attrs.has(cls) and not isinstance(data, dict):
        raise StructureFailed(
            [FieldProblem(path=root, message=f"expected an object, found {json_kind(data)}")]
        )
    try:
        return converter.structure(data, cls)
    except (ClassValidationError, IterableValidationError, ValueError, TypeError, KeyError) as exc:
        problems: list[FieldProblem] = []
        _walk(exc, root, problems)
        raise StructureFailed(problems) from None
