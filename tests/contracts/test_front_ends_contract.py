"""The front-end contract, kept by raw's own front ends: one made of functions, one built
on BaseFrontEnd, and the terminal's."""

from __future__ import annotations

from typing import Any

import pytest

from raw_core import BaseFrontEnd, CallbackFrontEnd
from raw_core.cli._render import TerminalFrontEnd
from raw_core.runtime.frontend import FrontEnd
from tests.contracts.front_end_contract import FrontEndCase, FrontEndContract


class Recorder:
    """What a front end received: event types and approval requests."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.asked: list[tuple[str, Any]] = []

    def on_event(self, event: Any) -> None:
        self.events.append(event.to_dict()["type"])

    def case(self, make: Any) -> FrontEndCase:
        return FrontEndCase(make=make, events=lambda: self.events, asked=lambda: self.asked)


class TestCallbackFrontEnd(FrontEndContract):
    @pytest.fixture
    def front_end_case(self) -> FrontEndCase:
        seen = Recorder()

        def make(approves: bool | None) -> FrontEnd:
            async def approve(request: Any) -> bool:
                seen.asked.append((request.identity, request.effects))
                assert approves is not None
                return approves

            return CallbackFrontEnd(
                on_event=seen.on_event,
                approve=approve if approves is not None else None,
                name="callbacks",
            )

        return seen.case(make)


class Subclassed(BaseFrontEnd):
    """A front end written the way the session-service page shows."""

    name = "subclassed"

    def __init__(self, seen: Recorder, approves: bool | None) -> None:
        self._seen = seen
        self._approves = approves
        self.can_approve = approves is not None

    def on_event(self, event: Any) -> None:
        self._seen.on_event(event)

    async def approve(self, request: Any) -> bool:
        self._seen.asked.append((request.identity, request.effects))
        return self._approves is True


class TestBaseFrontEndSubclass(FrontEndContract):
    @pytest.fixture
    def front_end_case(self) -> FrontEndCase:
        seen = Recorder()
        return seen.case(lambda approves: Subclassed(seen, approves))


class Reader:
    """A terminal line reader whose user answers with a fixed choice."""

    def __init__(self, seen: Recorder, approves: bool) -> None:
        self._seen = seen
        self._approves = approves

    async def readline(self, prompt: str = "") -> str:
        return "y" if self._approves else "n"


class TestTerminalFrontEnd(FrontEndContract):
    @pytest.fixture
    def front_end_case(self, monkeypatch: pytest.MonkeyPatch) -> FrontEndCase:
        seen = Recorder()
        # What the terminal shows before it asks is recorded as what it was asked.
        monkeypatch.setattr(
            "raw_core.cli._render.show_request",
            lambda request, err=True: seen.asked.append((request.identity, request.effects)),
        )

        def make(approves: bool | None) -> FrontEnd:
            reader = Reader(seen, approves) if approves is not None else None
            return TerminalFrontEnd(seen.on_event, reader)

        return seen.case(make)


class _Wire:
    """The ACP client at the wire edge: what raw sent it, answering permission requests
    with a fixed option."""

    def __init__(self, seen: Recorder, approves: bool | None) -> None:
        self._seen = seen
        self._approves = approves
        self.updates: list[Any] = []

    def put(self, session_id: str, update: Any) -> None:
        self.updates.append(update)

    def put_text(self, session_id: str, text: str) -> None:
        self.updates.append(text)

    async def drain(self) -> None:
        """Everything is sent at once here."""

    async def request_permission(self, *, session_id: str, tool_call: Any, options: Any) -> Any:
        from acp.schema import RequestPermissionResponse

        shown = tool_call.field_meta["raw"]
        self._seen.asked.append((shown["identity"], shown["effects"]))
        option = "allow_once" if self._approves else "reject_once"
        return RequestPermissionResponse.model_validate(
            {"outcome": {"outcome": "selected", "optionId": option}}
        )


class TestAcpFrontEnd(FrontEndContract):
    """raw-acp's front end, its client a recorder at the wire edge. A session whose
    client may not be asked does not exist over ACP (every client answers
    ``session/request_permission``); the case that cannot ask is the same front end told
    so."""

    @pytest.fixture
    def front_end_case(self) -> FrontEndCase:
        from raw_acp.frontend import AcpFrontEnd

        seen = Recorder()

        class Recording(AcpFrontEnd):
            def on_event(self, event: Any) -> None:
                seen.on_event(event)
                super().on_event(event)

        def make(approves: bool | None) -> FrontEnd:
            wire = _Wire(seen, approves)
            front_end = Recording(wire, wire, cwd=None)  # type: ignore[arg-type]
            if approves is None:
                front_end.can_approve = False
            return front_end

        return seen.case(make)
