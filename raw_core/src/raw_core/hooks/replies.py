"""What a command hook answered: its exit status and output read as one decision.

The protocol is the one hook scripts of other coding agents already speak, read strictly:

* exit 0 with no output (or only white space): no opinion;
* exit 0 with a JSON object on stdout: ``decision`` (``allow``, ``ask``, ``deny``; ``approve``
  and ``block`` are accepted for ``allow`` and ``deny``), ``reason``, ``context`` (one line
  for the model), and the aliases ``hookSpecificOutput.permissionDecision`` /
  ``permissionDecisionReason`` / ``additionalContext`` / ``hookEventName``, plus
  ``continue: false`` (a deny, ``stopReason`` its reason) and the ignored display fields
  ``suppressOutput`` and ``systemMessage``;
* exit 2: deny, with stderr as the reason;
* anything else fails: another exit status, a signal, the deadline, a program that cannot
  start, stdout over its bound, output that is not strict JSON or not an object, an unknown
  field, a value of the wrong type (``null`` included: a field is given or left out) — and
  any request to rewrite the call
  (``updatedInput`` and the like), which is also logged.

:func:`read_reply` returns a :class:`Reply` or raises :class:`~raw_core.errors.HookFailed`;
what each event does with a reply is :mod:`raw_core.hooks.events`' business.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final, Literal

import attrs

from raw_core._convert import json_kind, json_text
from raw_core._json import JsonInputError, loads_strict
from raw_core.errors import HookFailed
from raw_core.hooks._process import MAX_STREAM_BYTES, Finished
from raw_core.hooks.loader import LoadedHook

__all__ = ["MAX_REASON_CHARS", "Reply", "read_reply", "stderr_text"]

logger = logging.getLogger("raw_core.hooks")

MAX_REASON_CHARS: Final = 4000
"""The most characters of a reason (or of stderr quoted in a failure) kept."""

Decision = Literal["allow", "ask", "deny"]
_DECISIONS: Final[Mapping[str, Decision]] = {
    "allow": "allow",
    "approve": "allow",
    "ask": "ask",
    "deny": "deny",
    "block": "deny",
}
_PERMISSIONS: Final[Mapping[str, Decision]] = {"allow": "allow", "ask": "ask", "deny": "deny"}
_SEVERITY: Final = {None: -1, "allow": 0, "ask": 1, "deny": 2}
_TOP: Final = frozenset(
    {
        "decision",
        "reason",
        "context",
        "hookSpecificOutput",
        "continue",
        "stopReason",
        "suppressOutput",
        "systemMessage",
    }
)
_SPECIFIC: Final = frozenset(
    {"hookEventName", "permissionDecision", "permissionDecisionReason", "additionalContext"}
)
REWRITES: Final = frozenset(
    {"updatedInput", "updated_input", "updatedMCPToolOutput", "tool_input", "arguments"}
)
"""Fields that would change a call or its result: refused, the call fails closed."""


@attrs.frozen(kw_only=True)
class Reply:
    """One hook's answer: ``decision`` (``None``: no opinion), its ``reason``, and a
    ``context`` line for the model."""

    decision: Decision | None = None
    reason: str | None = None
    context: str | None = None


def _cut(text: str) -> str:
    return text if len(text) <= MAX_REASON_CHARS else text[:MAX_REASON_CHARS] + "…"


def stderr_text(finished: Finished) -> str:
    """The hook's stderr as text (invalid UTF-8 replaced), stripped and bounded."""
    return _cut(finished.stderr.decode("utf-8", "replace").strip())


def _failed(hook: LoadedHook, event: str, message: str) -> HookFailed:
    return HookFailed(f"hook {hook.identity} ({event}) {message}", hook=hook.identity, event=event)


def outcome_problem(hook: LoadedHook, finished: Finished, timeout: float) -> str | None:
    """Why a run counts as a failure whatever the event (``None``: it exited 0 or 2)."""
    if finished.status == "not_started":
        return f"could not start {json_text(hook.argv[0])}: {finished.error}"
    if finished.status == "timeout":
        return f"did not finish within {timeout:g} s; its process group was killed"
    code = finished.returncode
    assert code is not None
    if code < 0:
        return f"was killed by signal {-code}"
    if code not in (0, 2):
        said = stderr_text(finished)
        return f"exited with status {code}" + (f": {said}" if said else "")
    return None


def read_reply(hook: LoadedHook, event: str, finished: Finished, timeout: float) -> Reply:
    """Read a finished run of ``hook`` at ``event`` as a :class:`Reply`; raise
    ``hook_failed`` for anything the protocol does not allow."""
    problem = outcome_problem(hook, finished, timeout)
    if problem is not None:
        raise _failed(hook, event, problem)
    if finished.returncode == 2:
        return Reply(decision="deny", reason=stderr_text(finished) or None)
    if finished.stdout_dropped:
        size = len(finished.stdout) + finished.stdout_dropped
        raise _failed(hook, event, f"printed {size} bytes; the limit is {MAX_STREAM_BYTES}")
    if not finished.stdout.strip():
        return Reply()
    try:
        data = loads_strict(finished.stdout)
    except JsonInputError as exc:
        raise _failed(hook, event, f"printed output that is not strict JSON: {exc}") from None
    if not isinstance(data, dict):
        raise _failed(hook, event, f"printed {json_kind(data)}, not a JSON object")
    return _fields(hook, event, data)


def _string(
    hook: LoadedHook, event: str, data: Mapping[str, Any], key: str, where: str
) -> str | None:
    """The string at ``key`` (``None``: absent). ``null`` is a value of the wrong type,
    as any other non-string is."""
    if key not in data:
        return None
    value = data[key]
    if not isinstance(value, str):
        raise _failed(hook, event, f"answered {where}{key} = {json_text(value)}; expected a string")
    return value


def _refuse_rewrites(hook: LoadedHook, event: str, data: Mapping[str, Any], where: str) -> None:
    for key in sorted(REWRITES & set(data)):
        logger.warning("hook %s asked to rewrite a call (%s%s); refused", hook.identity, where, key)
        raise _failed(
            hook,
            event,
            f"asked to change the call ({where}{key}); a hook cannot change a call's"
            " arguments or result, so the call is stopped",
        )


def _decision(
    hook: LoadedHook,
    event: str,
    data: Mapping[str, Any],
    key: str,
    allowed: Mapping[str, Decision],
    where: str,
) -> Decision | None:
    """The decision at ``key`` (``None``: absent); ``null`` is not one of them."""
    if key not in data:
        return None
    value = data[key]
    name = where + key
    decision = allowed.get(value) if isinstance(value, str) else None
    if decision is None:
        listed = ", ".join(json_text(k) for k in allowed)
        raise _failed(
            hook, event, f"answered {name} = {json_text(value)}; expected one of {listed}"
        )
    return decision


def _fields(hook: LoadedHook, event: str, data: Mapping[str, Any]) -> Reply:
    _refuse_rewrites(hook, event, data, "")
    unknown = sorted(set(data) - _TOP)
    if unknown:
        raise _failed(hook, event, f"answered an unknown field {json_text(unknown[0])}")
    decision = _decision(hook, event, data, "decision", _DECISIONS, "")
    reason = _string(hook, event, data, "reason", "")
    context = _string(hook, event, data, "context", "")
    stop_reason = _string(hook, event, data, "stopReason", "")
    _string(hook, event, data, "systemMessage", "")
    for key in ("continue", "suppressOutput"):
        if key in data and not isinstance(data[key], bool):
            raise _failed(
                hook, event, f"answered {key} = {json_text(data[key])}; expected a boolean"
            )
    if data.get("continue") is False:
        decision = "deny"
        reason = reason or stop_reason
    if "hookSpecificOutput" in data:
        specific = data["hookSpecificOutput"]
        if not isinstance(specific, dict):
            raise _failed(hook, event, f"answered hookSpecificOutput as {json_kind(specific)}")
        _refuse_rewrites(hook, event, specific, "hookSpecificOutput.")
        unknown = sorted(set(specific) - _SPECIFIC)
        if unknown:
            raise _failed(hook, event, f"answered an unknown field hookSpecificOutput.{unknown[0]}")
        named = _string(hook, event, specific, "hookEventName", "hookSpecificOutput.")
        if named is not None and named != event:
            raise _failed(
                hook, event, f"answered hookSpecificOutput.hookEventName = {json_text(named)}"
            )
        permission = _decision(
            hook, event, specific, "permissionDecision", _PERMISSIONS, "hookSpecificOutput."
        )
        if _SEVERITY[permission] > _SEVERITY[decision]:
            decision = permission
        said = _string(hook, event, specific, "permissionDecisionReason", "hookSpecificOutput.")
        reason = reason or said
        extra = _string(hook, event, specific, "additionalContext", "hookSpecificOutput.")
        context = context if context is not None else extra
    return Reply(
        decision=decision,
        reason=_cut(reason) if reason else None,
        context=context if context else None,
    )
