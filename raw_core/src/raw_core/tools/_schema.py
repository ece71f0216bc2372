"""The only importer of fastjsonschema: check, normalise and compile a tool's JSON Schemas.

What this facade adds to fastjsonschema, and why:

* **Drafts.** draft-07 and 2020-12 are accepted. fastjsonschema speaks draft-07, so a
  2020-12 schema is rewritten to its draft-07 equivalent (``prefixItems`` → array ``items``
  plus ``additionalItems``; ``dependentRequired``/``dependentSchemas`` → ``dependencies``;
  ``$ref`` with siblings → ``allOf``). Keywords with no equivalent are refused, naming the
  keyword: nothing is silently ignored.
* **Local references only.** Every ``$ref`` must be a JSON pointer into the same document
  and must resolve; nothing is ever fetched.
* **Linear-time patterns.** ``pattern`` and ``patternProperties`` are compiled with RE2
  (checked when the schema is prepared) and the generated validator searches with RE2,
  never with Python's backtracking ``re``.
* **No rewriting.** ``default`` values are never inserted and ``format`` is an annotation,
  as in 2020-12: validation never changes the value it checks.
* **Compiled once.** Validators are cached by the schema's canonical JSON text.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, Final

import fastjsonschema
from fastjsonschema.draft07 import CodeGeneratorDraft07
from fastjsonschema.ref_resolver import RefResolver

from raw_core._convert import json_kind, json_text
from raw_core._re2 import PatternError, compile_pattern
from raw_core.tools._schema_loops import endless_reference
from raw_core.tools._schema_pointers import NOWHERE as _NOWHERE
from raw_core.tools._schema_pointers import child as _child
from raw_core.tools._schema_pointers import resolve_pointer as _resolve_pointer

__all__ = [
    "SchemaDefinitionError",
    "SchemaValidationError",
    "SchemaValidator",
    "compile_schema",
    "prepare_schema",
]

DRAFT_07: Final = "draft-07"
DRAFT_2020_12: Final = "2020-12"

_SCHEMA_URIS: Final = {
    "http://json-schema.org/draft-07/schema#": DRAFT_07,
    "http://json-schema.org/draft-07/schema": DRAFT_07,
    "https://json-schema.org/draft/2020-12/schema": DRAFT_2020_12,
    "https://json-schema.org/draft/2020-12/schema#": DRAFT_2020_12,
}

# Keywords whose value is one subschema, a list of subschemas, or a map of them.
_ONE: Final = (
    "additionalItems",
    "additionalProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
)
_LIST: Final = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP: Final = ("properties", "patternProperties", "definitions", "$defs", "dependentSchemas")

_NO_EQUIVALENT: Final = (
    "minContains",
    "maxContains",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$anchor",
)
_ONLY_2020: Final = ("prefixItems", "dependentRequired", "dependentSchemas")


_TYPE_NAMES: Final = frozenset(
    {"array", "boolean", "integer", "null", "number", "object", "string"}
)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_type(value: Any) -> bool:
    if isinstance(value, str):
        return value in _TYPE_NAMES
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, str) and v in _TYPE_NAMES for v in value)
        and len(set(value)) == len(value)
    )


def _is_names(value: Any) -> bool:
    return (
        isinstance(value, list)
        and all(isinstance(v, str) for v in value)
        and len(set(value)) == len(value)
    )


# What the value of each non-schema keyword must be (draft-07's meta-schema): a schema with
# "multipleOf": 0 or "type": "strin" is refused when the tool loads, not when it is called.
_KEYWORD_VALUES: Final[dict[str, tuple[str, Callable[[Any], bool]]]] = {
    "type": ("a type name or an array of distinct type names", _is_type),
    "enum": ("an array", lambda v: isinstance(v, list)),
    "required": ("an array of distinct strings", _is_names),
    "multipleOf": ("a number greater than 0", lambda v: _is_number(v) and v > 0),
    "maximum": ("a number", _is_number),
    "minimum": ("a number", _is_number),
    "exclusiveMaximum": ("a number", _is_number),
    "exclusiveMinimum": ("a number", _is_number),
    "maxLength": ("a non-negative integer", _is_count),
    "minLength": ("a non-negative integer", _is_count),
    "maxItems": ("a non-negative integer", _is_count),
    "minItems": ("a non-negative integer", _is_count),
    "maxProperties": ("a non-negative integer", _is_count),
    "minProperties": ("a non-negative integer", _is_count),
    "uniqueItems": ("a boolean", lambda v: isinstance(v, bool)),
    "format": ("a string", lambda v: isinstance(v, str)),
}


class SchemaDefinitionError(ValueError):
    """The schema itself is unusable; ``path`` is the JSON path inside the schema."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.message = message
        self.path = path


class SchemaValidationError(ValueError):
    """A value does not satisfy a schema; ``path`` is the JSON path of the offending part."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.message = message
        self.path = path


class _Preparer:
    """One pass over a schema: checks every rule and returns the draft-07 form."""

    def __init__(self, root: Mapping[str, Any], draft: str, where: str) -> None:
        self.root = root
        self.draft = draft
        self.where = where

    def fail(self, message: str, path: str) -> SchemaDefinitionError:
        return SchemaDefinitionError(message, path)

    def schema(self, node: Any, path: str, *, is_root: bool = False) -> Any:
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict):
            raise self.fail(
                f"expected a schema (an object or a boolean), found {json_kind(node)}", path
            )
        for keyword in _NO_EQUIVALENT:
            if keyword in node:
                raise self.fail(
                    f"keyword {keyword!r} has no draft-07 equivalent and is not supported",
                    _child(path, keyword),
                )
        if self.draft == DRAFT_07:
            for keyword in _ONLY_2020:
                if keyword in node:
                    raise self.fail(
                        f'{keyword!r} is a 2020-12 keyword; declare "$schema": '
                        '"https://json-schema.org/draft/2020-12/schema" to use it',
                        _child(path, keyword),
                    )
        elif "additionalItems" in node:
            raise self.fail(
                "'additionalItems' is not a 2020-12 keyword; use 'items' after 'prefixItems'",
                _child(path, "additionalItems"),
            )
        if "$id" in node and not is_root:
            raise self.fail("'$id' is only allowed at the root of a schema", _child(path, "$id"))
        out: dict[str, Any] = {}
        for key, value in node.items():
            out[key] = self.keyword(key, value, path)
        if self.draft == DRAFT_2020_12:
            out = self.rewrite_2020(out, path)
        return out

    def keyword(self, key: str, value: Any, path: str) -> Any:
        here = _child(path, key)
        if key == "$ref":
            if not isinstance(value, str):
                raise self.fail("'$ref' must be a string", here)
            if not value.startswith("#"):
                raise self.fail(
                    f"only local references (starting with '#') are allowed;"
                    f" {json_text(value)} would be fetched",
                    here,
                )
            target = _resolve_pointer(self.root, value)
            if target is _NOWHERE:
                raise self.fail(
                    f"reference {json_text(value)} does not resolve inside this schema", here
                )
            if not isinstance(target, dict | bool):
                raise self.fail(
                    f"reference {json_text(value)} names {json_kind(target)}, not a schema", here
                )
            return value
        if key == "pattern":
            if not isinstance(value, str):
                raise self.fail("'pattern' must be a string", here)
            _check_pattern(value, here)
            return value
        if key in _KEYWORD_VALUES:
            expected, check = _KEYWORD_VALUES[key]
            if not check(value):
                raise self.fail(f"{key!r} must be {expected}, found {json_text(value)}", here)
            return value
        if key in _ONE:
            return self.schema(value, here)
        if key in _LIST:
            if not isinstance(value, list):
                raise self.fail(f"{key!r} must be an array of schemas", here)
            return [self.schema(item, _child(here, i)) for i, item in enumerate(value)]
        if key == "items":
            if isinstance(value, list):
                if self.draft == DRAFT_2020_12:
                    raise self.fail(
                        "in 2020-12, 'items' is one schema; use 'prefixItems' for a tuple", here
                    )
                return [self.schema(item, _child(here, i)) for i, item in enumerate(value)]
            return self.schema(value, here)
        if key in _MAP:
            if not isinstance(value, dict):
                raise self.fail(f"{key!r} must be an object of schemas", here)
            if key == "patternProperties":
                for pattern in value:
                    _check_pattern(pattern, _child(here, pattern))
            return {k: self.schema(v, _child(here, k)) for k, v in value.items()}
        if key == "dependencies":
            if not isinstance(value, dict):
                raise self.fail("'dependencies' must be an object", here)
            return {
                k: v if isinstance(v, list) else self.schema(v, _child(here, k))
                for k, v in value.items()
            }
        return value

    def rewrite_2020(self, node: dict[str, Any], path: str) -> dict[str, Any]:
        if "prefixItems" in node:
            prefix = node.pop("prefixItems")
            rest = node.pop("items", None)
            node["items"] = prefix
            if rest is not None:
                node["additionalItems"] = rest
        deps: dict[str, Any] = {}
        if "dependentRequired" in node:
            deps.update(node.pop("dependentRequired"))
        if "dependentSchemas" in node:
            for key, sub in node.pop("dependentSchemas").items():
                if key in deps:
                    deps[key] = {"allOf": [{"required": deps[key]}, sub]}
                else:
                    deps[key] = sub
        if deps:
            node["dependencies"] = deps
        if "$ref" in node and len(node) > 1:
            ref = node.pop("$ref")
            node["allOf"] = [*node.get("allOf", []), {"$ref": ref}]
        if "$defs" in node:
            # Keep "$defs" (pointers name it) and let draft-07 see it as plain data.
            pass
        return node


def _check_pattern(pattern: str, path: str) -> None:
    try:
        compile_pattern(pattern)
    except PatternError as exc:
        raise SchemaDefinitionError(
            f"RE2 rejects pattern {json_text(pattern)}: {exc}", path
        ) from None


def prepare_schema(schema: Any, *, require_object: bool = True, path: str = "$") -> Any:
    """Check ``schema`` and return its draft-07 form (a new value; the input is untouched).

    Raises :class:`SchemaDefinitionError` naming the JSON path inside the schema. With
    ``require_object`` the root must declare ``"type": "object"``, as tool arguments and
    effects are objects.
    """
    if not isinstance(schema, dict):
        raise SchemaDefinitionError(
            f"expected a JSON Schema object, found {json_kind(schema)}", path
        )
    declared = schema.get("$schema")
    if declared is None:
        draft = DRAFT_07
    elif isinstance(declared, str) and declared in _SCHEMA_URIS:
        draft = _SCHEMA_URIS[declared]
    else:
        raise SchemaDefinitionError(
            f"unsupported $schema {json_text(declared)}: use draft-07"
            " (http://json-schema.org/draft-07/schema#) or 2020-12"
            " (https://json-schema.org/draft/2020-12/schema)",
            _child(path, "$schema"),
        )
    if require_object and schema.get("type") != "object":
        raise SchemaDefinitionError(
            'the root of the schema must declare "type": "object"', _child(path, "type")
        )
    prepared = _Preparer(schema, draft, path).schema(copy.deepcopy(schema), path, is_root=True)
    if draft == DRAFT_2020_12:
        prepared["$schema"] = "http://json-schema.org/draft-07/schema#"
    endless = endless_reference(prepared, path)
    if endless is not None:
        raise SchemaDefinitionError(
            "this reference leads back to itself without stepping into the value"
            " (through references, allOf, anyOf, oneOf, not, if/then/else or dependencies):"
            " validating would never end",
            endless,
        )
    return prepared


def _refuse_remote(uri: str) -> Any:
    raise SchemaDefinitionError(f"remote reference {json_text(uri)} is never fetched", "$")


_NO_FETCH: Final = dict.fromkeys(("http", "https", "file", "ftp", "data"), _refuse_remote)


class SchemaValidator:
    """A compiled validator. Call :meth:`validate`; it never changes the value."""

    __slots__ = ("_function", "schema")

    def __init__(self, schema: Mapping[str, Any], function: Callable[[Any], Any]) -> None:
        self.schema = schema
        self._function = function

    def validate(self, value: Any) -> None:
        """Raise :class:`SchemaValidationError` when ``value`` does not satisfy the schema."""
        try:
            self._function(value)
        except fastjsonschema.JsonSchemaValueException as exc:
            name = exc.name or "data"
            path = "$" + name[4:] if name.startswith("data") else "$"
            message = _quoted_as_json(exc)
            if message is None:
                message = exc.message
                if message.startswith(name):
                    message = message[len(name) :].lstrip()
            raise SchemaValidationError(message, path) from None


def _quoted_as_json(exc: fastjsonschema.JsonSchemaValueException) -> str | None:
    """The message of a rule whose fastjsonschema message quotes values as Python writes
    them (``['a', 'b']``, ``{'x'}``, ``True``), with the values as JSON; None for the other
    rules, whose messages quote only numbers and type names."""
    rule, definition, value = exc.rule, exc.definition, exc.value
    if not isinstance(definition, dict):
        return None
    if rule == "enum":
        return f"must be one of {json_text(definition['enum'], 400)}"
    if rule == "const":
        return f"must be {json_text(definition['const'], 400)}"
    if rule == "pattern":
        return f"must match the pattern {json_text(definition['pattern'], 400)}"
    if not isinstance(value, dict):
        return None
    if rule == "required":
        missing = [key for key in definition["required"] if key not in value]
        return f"must have the properties {json_text(missing, 400)}"
    if rule == "additionalProperties":
        declared = definition.get("properties", {})
        patterns = [compile_pattern(p) for p in definition.get("patternProperties", {})]
        extra = [
            key for key in value if key not in declared and not any(p.search(key) for p in patterns)
        ]
        return f"must not have the properties {json_text(extra, 400)}"
    if rule == "dependencies":
        for key, needed in definition["dependencies"].items():
            if key in value and isinstance(needed, list):
                missing = [other for other in needed if other not in value]
                if missing:
                    return f"has {json_text(key)}, so it must also have {json_text(missing)}"
    return None


def compile_schema(prepared: Mapping[str, Any]) -> SchemaValidator:
    """Compile a schema returned by :func:`prepare_schema` (cached by its canonical text)."""
    return _compile_cached(json.dumps(prepared, sort_keys=True, separators=(",", ":")))


@lru_cache(maxsize=2048)
def _compile_cached(canonical: str) -> SchemaValidator:
    definition = json.loads(canonical)
    try:
        resolver = RefResolver.from_schema(definition, handlers=_NO_FETCH, store={})
        generator = CodeGeneratorDraft07(  # type: ignore[no-untyped-call]
            definition, resolver=resolver, formats={}, use_default=False, use_formats=False
        )
        code = generator.func_code
        state = dict(generator.global_state)
    except (
        fastjsonschema.JsonSchemaDefinitionException,
        re.error,
        TypeError,
        ValueError,
        KeyError,
        AttributeError,
    ) as exc:
        raise SchemaDefinitionError(
            f"fastjsonschema cannot compile the schema: {exc}", "$"
        ) from None
    # Search with RE2, never with the backtracking ``re`` objects fastjsonschema built.
    state["REGEX_PATTERNS"] = {key: compile_pattern(key) for key in state["REGEX_PATTERNS"]}
    exec(code, state)  # the code fastjsonschema generated from a checked schema
    return SchemaValidator(definition, state[resolver.get_scope_name()])
