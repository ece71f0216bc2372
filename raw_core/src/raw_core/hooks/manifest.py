"""Hook manifests (``hook.json``, ``protocol_version: 2``): the record and its rules.

:func:`parse_hook_manifest` checks everything ``hook.json`` alone can say — every field, its
type and format, unknown fields at every level, the ``when`` predicate's regex (RE2) and
path syntax — and runs nothing. Binding ``when`` to the tools ``match`` selects happens when
an agent is loaded (:mod:`raw_core.hooks.subscriptions`). Every error is a
:class:`~raw_core.errors.HookInvalid` whose ``field`` is the JSON path in ``hook.json``.
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal, get_args

import attrs

from raw_core._convert import (
    FieldProblem,
    FieldValueError,
    StructureFailed,
    json_text,
    make_converter,
    structure,
)
from raw_core._json import JsonInputError, loads_strict
from raw_core._os_text import unfit_for_os
from raw_core.config import MAX_HOOK_TIMEOUT_MS, Predicate
from raw_core.errors import HookInvalid
from raw_core.policy.predicate import PredicateError, PreparedPredicate, prepare_predicate
from raw_core.tools.calls import HOOK_PROTOCOL_VERSION

__all__ = [
    "EVENTS",
    "HOOK_PROTOCOL_VERSION",
    "OBSERVER_EVENTS",
    "TOOL_EVENTS",
    "Event",
    "HookManifest",
    "parse_hook_manifest",
]

MAX_HOOK_MANIFEST_BYTES: Final = 256 * 1024

Event = Literal["PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart", "Stop"]
EVENTS: Final[tuple[str, ...]] = get_args(Event)
TOOL_EVENTS: Final = frozenset({"PreToolUse", "PostToolUse"})
"""The events of one tool call: their payload has the call, and ``match``/``when`` apply."""
OBSERVER_EVENTS: Final = frozenset({"SessionStart", "Stop"})
"""The events a hook only observes: its answer is not read, its failure is logged."""

_ID_RE: Final = re.compile(r"[a-z][a-z0-9_-]*")
_VERSION_RE: Final = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")


def _fullmatch(pattern: re.Pattern[str], expected: str) -> Any:
    def check(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
        if not pattern.fullmatch(value):
            raise FieldValueError(attribute.name, f"expected {expected}, found {json_text(value)}")

    return check


def _non_empty(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    if not value.strip():
        raise FieldValueError(attribute.name, "expected a non-empty string")


@attrs.frozen(kw_only=True)
class HookManifest:
    """A validated ``hook.json``.

    ``command`` is the program and its arguments, run without a shell; an ``argv[0]`` that
    starts with ``./`` names a file in the hook's folder. ``match`` (a glob over tool
    identities, ``*`` when absent) and ``when`` (a predicate, as rules have) choose the
    calls a hook of tool events runs for. ``timeout_ms`` is the hook's own time limit.
    """

    protocol_version: int
    id: str = attrs.field(
        validator=_fullmatch(_ID_RE, "lowercase letters, digits, _ and -, starting with a letter")
    )
    version: str = attrs.field(validator=_fullmatch(_VERSION_RE, "major.minor.patch"))
    description: str = attrs.field(validator=_non_empty)
    events: tuple[Event, ...]
    command: tuple[str, ...]
    match: str | None = None
    when: Predicate | None = None
    timeout_ms: int | None = None

    @property
    def tool_events(self) -> tuple[str, ...]:
        """The events of this hook that are about one tool call, in manifest order."""
        return tuple(event for event in self.events if event in TOOL_EVENTS)


_CONVERTER: Final = make_converter()


def _problem(message: str, path: str, hook: str | None) -> HookInvalid:
    return HookInvalid(message, field=path, hook=hook)


def _check_rules(manifest: HookManifest, hook: str | None) -> PreparedPredicate | None:
    """The rules that span fields, checked once every field has its type."""
    if not manifest.events:
        raise _problem("expected at least one event", "$.events", hook)
    for index, event in enumerate(manifest.events):
        if manifest.events.index(event) != index:
            raise _problem(f"{json_text(event)} is listed twice", f"$.events[{index}]", hook)
    if not manifest.command:
        raise _problem(
            "expected a non-empty array: the program and its arguments", "$.command", hook
        )
    for index, part in enumerate(manifest.command):
        if index == 0 and not part.strip():
            raise _problem("expected a program name or path", "$.command[0]", hook)
        found = unfit_for_os(part)
        if found is not None:
            raise _problem(
                f"expected text the system can be given, found one with {found}",
                f"$.command[{index}]",
                hook,
            )
    program = manifest.command[0]
    if "/" in program and not program.startswith(("./", "/")):
        raise _problem(
            "a program path must be absolute or start with ./ (a file in the hook's folder),"
            f" found {json_text(program)}",
            "$.command[0]",
            hook,
        )
    others = [event for event in manifest.events if event not in TOOL_EVENTS]
    for key in ("match", "when"):
        if getattr(manifest, key) is not None and others:
            raise _problem(
                f"{key} chooses tool calls, so it is only valid when every event is a tool"
                f" event (PreToolUse, PostToolUse); found {json_text(others[0])}",
                f"$.{key}",
                hook,
            )
    if manifest.match is not None and not manifest.match:
        raise _problem(
            "expected a glob over tool identities, found an empty string", "$.match", hook
        )
    timeout = manifest.timeout_ms
    if timeout is not None and not 0 < timeout <= MAX_HOOK_TIMEOUT_MS:
        raise _problem(
            f"expected milliseconds above 0 and at most {MAX_HOOK_TIMEOUT_MS}, found {timeout}",
            "$.timeout_ms",
            hook,
        )
    if manifest.when is None:
        return None
    try:
        return prepare_predicate(manifest.when)
    except PredicateError as exc:
        raise _problem(exc.message, f"$.when.{exc.key}", hook) from None


def parse_hook_manifest(
    text: str | bytes, *, hook: str | None = None
) -> tuple[HookManifest, PreparedPredicate | None]:
    """Parse and check the text of a ``hook.json``; return it and its ``when`` compiled
    (``None`` without one). ``hook`` names the hook in errors. Runs nothing."""
    size = len(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    if size > MAX_HOOK_MANIFEST_BYTES:
        raise _problem(
            f"hook.json is {size} bytes; the limit is {MAX_HOOK_MANIFEST_BYTES}", "$", hook
        )
    try:
        data = loads_strict(text)
    except JsonInputError as exc:
        raise _problem(f"hook.json is not valid JSON: {exc}", "$", hook) from None
    if isinstance(data, dict) and "protocol_version" in data:
        found = data["protocol_version"]
        if type(found) is not int or found != HOOK_PROTOCOL_VERSION:
            # Said first: a manifest of another version fails every other rule too.
            raise _problem(
                f"expected the integer {HOOK_PROTOCOL_VERSION}, found {json_text(found)}",
                "$.protocol_version",
                hook,
            )
    try:
        manifest = structure(_CONVERTER, data, HookManifest)
    except StructureFailed as exc:
        first: FieldProblem = exc.problems[0]
        error = _problem(first.message, first.path, hook)
        error.context["problems"] = [attrs.asdict(p) for p in exc.problems]
        raise error from None
    return manifest, _check_rules(manifest, hook)
