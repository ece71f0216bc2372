"""Interaction requests (spec 000): a tool asks the user a question while its call runs.

A handler calls ``await context.interactions.request(panel=..., document=...,
timeout_ms=...)``. ``panel`` is one of the tool's declared panels (where a front end shows
the question); ``document`` is a panel document (``raw.panel/2``) holding exactly one
``form`` block (``panel_invalid`` otherwise); ``timeout_ms`` is the request's deadline, 30
minutes by default and at most 24 hours. The call resolves with the person's
:class:`~raw_core.sessions.backend.InteractionAnswer` — the form's values keyed by field id,
checked against the form by :func:`check_answer` — or raises:

* ``interaction_unavailable`` at once when nobody can answer (a piped or non-interactive
  run): it never waits;
* ``interaction_expired`` when the deadline passed unanswered;
* ``cancelled`` when the turn was cancelled, or the person cancelled the form.

While a request is pending, the handler's own time limit (``handler_timeout_ms``) is paused
(:class:`HandlerClock`): the request's deadline decides. Answering never grants a tool
permission. The session side (storing the request, asking the front end, answers by id) is
:mod:`raw_core.runtime.interactions`; this module is what the tool sees.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

import anyio
import attrs

from raw_core.errors import (
    AnswerInvalid,
    InteractionUnavailable,
    PanelInvalid,
    PanelNotOwned,
    PanelUndeclared,
)
from raw_core.frozen import freeze, thaw
from raw_core.sessions.records import InteractionAnswer
from raw_core.tools.manifest import PanelDeclaration
from raw_core.tools.panel_blocks import check_document

__all__ = [
    "DEFAULT_INTERACTION_TIMEOUT_MS",
    "MAX_INTERACTION_TIMEOUT_MS",
    "CallInteractions",
    "HandlerClock",
    "InteractionCallback",
    "InteractionRequest",
    "check_answer",
    "form_of",
]

DEFAULT_INTERACTION_TIMEOUT_MS: Final = 30 * 60 * 1000
MAX_INTERACTION_TIMEOUT_MS: Final = 24 * 60 * 60 * 1000


@attrs.frozen(kw_only=True)
class InteractionRequest:
    """One question, as the session's interaction callback (and a front end's
    ``interact``) receives it: who asks (``identity``, ``tool_call_id``), which of its
    panels (``panel``, with its ``declaration``), the checked ``document`` (one ``form``
    block, :attr:`form`), the deadline in ``timeout_ms``, and the call's ``signal``."""

    identity: str
    tool_call_id: str
    panel: str
    document: Mapping[str, Any]
    timeout_ms: int
    signal: Any = attrs.field(eq=False, repr=False)
    declaration: PanelDeclaration | None = None

    @property
    def form(self) -> Mapping[str, Any]:
        """The document's one ``form`` block."""
        return form_of(self.document)


InteractionCallback = Callable[[InteractionRequest], Awaitable[InteractionAnswer]]
"""What a dispatcher calls to ask: returns the checked answer, or raises
``interaction_expired`` / ``cancelled``."""


def form_of(document: Mapping[str, Any]) -> Mapping[str, Any]:
    """The one ``form`` block of a checked document; ``panel_invalid`` unless there is
    exactly one."""
    forms: list[Mapping[str, Any]] = [b for b in document["blocks"] if b.get("type") == "form"]
    if len(forms) != 1:
        raise PanelInvalid(
            f"expected exactly one form block in an interaction request, found {len(forms)}",
            field="$.document.blocks",
        )
    return forms[0]


# --- checking an answer ------------------------------------------------------------------


def _field_problem(field: Mapping[str, Any], value: Any) -> str | None:
    """Why ``value`` does not fit ``field`` (``None`` when it does)."""
    kind = field["type"]
    options = [o["value"] for o in field.get("options", ())]
    if kind == "text":
        if not isinstance(value, str):
            return "expected a string"
        if field.get("required") and not value.strip():
            return "expected an answer: the field is required"
        return None
    if kind == "single_select":
        if not isinstance(value, str):
            return "expected one option's value, as a string"
        if value not in options:
            return f"expected one of {options}, found {value!r}"
        return None
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        return "expected a list of option values"
    unknown = [v for v in value if v not in options]
    if unknown:
        return f"expected values among {options}, found {unknown[0]!r}"
    if len(set(value)) != len(value):
        return "expected each option at most once"
    low, high = field.get("min_selected", 0), field.get("max_selected", len(options))
    if not low <= len(value) <= high:
        return f"expected {low} to {high} choices, found {len(value)}"
    return None


def check_answer(form: Mapping[str, Any], values: Any) -> dict[str, Any]:
    """The form's values from an answer, checked: a JSON object keyed by field id, a string
    for a ``text`` or ``single_select`` field, a list of strings for a ``multi_select``
    one. A field left out takes its ``default`` (a text field without one: ``""``); a
    required ``single_select`` must be answered. ``answer_invalid`` lists every problem
    (``errors``: ``[{field, message}]``) and changes nothing."""
    if not isinstance(values, Mapping):
        raise AnswerInvalid(
            f"expected the answer's values as an object keyed by field id, found"
            f" {type(values).__name__}",
            field="$.values",
            errors=[{"field": "$.values", "message": "expected an object"}],
        )
    fields = {f["id"]: f for f in form["fields"]}
    errors: list[dict[str, str]] = []
    checked: dict[str, Any] = {}
    for key in values:
        if key not in fields:
            errors.append({"field": f"$.values.{key}", "message": "the form has no such field"})
    for key, field in fields.items():
        where = f"$.values.{key}"
        if key in values:
            value = thaw(values[key])
        elif "default" in field:
            value = thaw(field["default"])
        elif field["type"] == "text":
            value = ""
        elif field["type"] == "multi_select":
            value = []
        else:
            if field.get("required"):
                errors.append({"field": where, "message": "expected an answer: it is required"})
            continue
        problem = _field_problem(field, value)
        if problem is not None:
            errors.append({"field": where, "message": problem})
        else:
            checked[key] = list(value) if field["type"] == "multi_select" else value
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise AnswerInvalid(
            f"{first['field']}: {first['message']}{more}", field=first["field"], errors=errors
        )
    return checked


# --- the handler's paused clock ----------------------------------------------------------


class HandlerClock:
    """The handler's time limit, paused while one of its requests is pending.

    The dispatcher binds the cancel scope that enforces ``handler_timeout_ms``
    (:meth:`bind`); :meth:`pause` lifts its deadline and :meth:`resume` puts back what was
    left of it, so only the time the handler runs counts. Requests may overlap: the clock
    runs again when the last one ends."""

    def __init__(self) -> None:
        self._scope: anyio.CancelScope | None = None
        self._paused = 0
        self._left: float | None = None

    def bind(self, scope: anyio.CancelScope) -> None:
        """Enforce the limit with ``scope`` (its deadline is the limit)."""
        self._scope = scope
        if self._paused:
            self._stop()

    def _stop(self) -> None:
        scope = self._scope
        if scope is not None and math.isfinite(scope.deadline) and self._left is None:
            self._left = max(scope.deadline - anyio.current_time(), 0.0)
            scope.deadline = math.inf

    def pause(self) -> None:
        """Stop counting (until the matching :meth:`resume`)."""
        self._paused += 1
        if self._paused == 1:
            self._stop()

    def resume(self) -> None:
        """Count again once no request is pending."""
        self._paused = max(self._paused - 1, 0)
        if self._paused == 0 and self._scope is not None and self._left is not None:
            self._scope.deadline = anyio.current_time() + self._left
            self._left = None

    @property
    def paused(self) -> bool:
        """Whether a request is pending."""
        return self._paused > 0


# --- what the handler calls --------------------------------------------------------------


class CallInteractions:
    """``context.interactions`` of one call (see the module docstring)."""

    def __init__(
        self,
        ask: InteractionCallback | None,
        *,
        identity: str,
        tool_call_id: str,
        declarations: Sequence[PanelDeclaration],
        signal: Any,
    ) -> None:
        self._ask = ask
        self._identity = identity
        self._tool_call_id = tool_call_id
        self._declarations = {d.id: d for d in declarations}
        self._signal = signal
        self.clock = HandlerClock()

    @property
    def available(self) -> bool:
        """Whether anybody can answer (``request`` raises ``interaction_unavailable`` at
        once when not)."""
        return self._ask is not None

    def _panel(self, panel: Any) -> PanelDeclaration:
        if not isinstance(panel, str) or not panel:
            raise PanelInvalid("expected panel to name one of the tool's panels", field="$.panel")
        owner, _, short = panel.rpartition(":")
        if owner and owner != self._identity:
            raise PanelNotOwned(
                f"{panel} belongs to {owner}, not to {self._identity}",
                panel=panel,
                tool=self._identity,
            )
        declaration = self._declarations.get(short)
        if declaration is None:
            raise PanelUndeclared(
                f"{self._identity} declares no panel {short!r} (declare it in tool.json)",
                panel=panel,
                tool=self._identity,
            )
        return declaration

    async def request(
        self, *, panel: str, document: Mapping[str, Any], timeout_ms: int | None = None
    ) -> InteractionAnswer:
        """Ask the user and wait for the answer (see the module docstring)."""
        declaration = self._panel(panel)
        if timeout_ms is None:
            timeout_ms = DEFAULT_INTERACTION_TIMEOUT_MS
        if type(timeout_ms) is not int or not 1 <= timeout_ms <= MAX_INTERACTION_TIMEOUT_MS:
            raise PanelInvalid(
                f"expected timeout_ms to be an integer from 1 to {MAX_INTERACTION_TIMEOUT_MS}"
                f" (24 hours), found {timeout_ms!r}",
                field="$.timeout_ms",
            )
        plain = thaw(document)
        check_document(plain)
        form_of(plain)
        if self._ask is None:
            raise InteractionUnavailable(
                f"{self._identity} asks the user a question, and nobody can answer here (a"
                " piped or non-interactive run)",
                for_model="the user cannot be asked here (a non-interactive run); go on"
                " without their answer",
                tool=self._identity,
            )
        request = InteractionRequest(
            identity=self._identity,
            tool_call_id=self._tool_call_id,
            panel=declaration.id,
            document=freeze(plain),
            timeout_ms=timeout_ms,
            signal=self._signal,
            declaration=declaration,
        )
        self.clock.pause()
        try:
            return await self._ask(request)
        finally:
            self.clock.resume()
