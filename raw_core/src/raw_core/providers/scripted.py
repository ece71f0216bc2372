"""Providers that need no network: a scripted one for tests, a replay one for demos.

:class:`ScriptedProvider` answers each request with the next :class:`Reply` of its script
(or a list of raw events), streaming text and tool-call arguments in small fragments as a
real service does, and keeps every request it received in :attr:`ScriptedProvider.requests`
so a test can check what the model was sent. :class:`ReplayProvider` plays a recorded
conversation from a JSONL file, one reply per line::

    {"text": "Let me look.", "tool_calls": [{"name": "read_file",
        "arguments": {"files": [{"path": "a.py"}]}}]}
    {"text": "Done."}

(shown folded here: each reply is one line in the file).
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import anyio
import attrs

from raw_core._json import JsonInputError, loads_strict
from raw_core.errors import ConfigInvalid, ProviderError, ProviderFailed
from raw_core.providers.contract import (
    ModelRequest,
    PartEvent,
    ProviderEvent,
    ProviderRecord,
    StopEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from raw_core.sessions.messages import ProviderPart

__all__ = ["ReplayProvider", "Reply", "ScriptedProvider", "replay_provider_record"]

MAX_DELAY_MS: Final = 60_000
"""The longest pause a recording's line may ask for before each event (a minute)."""


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or []


@attrs.frozen(kw_only=True)
class Reply:
    """One scripted model response.

    ``tool_calls`` are ``(name, arguments)`` pairs; arguments given as a mapping are sent as
    their JSON text, a string is sent as is (so a test can send broken JSON). ``error``, when
    set, is raised after the events (a stream that fails midway). ``delay`` seconds pass
    before each event, so a test can cancel a turn mid-stream.
    """

    text: str = ""
    tool_calls: tuple[tuple[str, str | Mapping[str, Any]], ...] = ()
    parts: tuple[ProviderPart, ...] = ()
    usage: UsageEvent | None = None
    error: ProviderError | None = None
    chunk: int = 16
    delay: float = 0.0

    def events(self, call_ids: Iterable[str]) -> list[ProviderEvent]:
        """The stream this reply produces; ``call_ids`` supplies the tool calls' ids."""
        events: list[ProviderEvent] = [
            TextDelta(text=piece) for piece in _chunks(self.text, self.chunk)
        ]
        for index, ((name, arguments), call_id) in enumerate(
            zip(self.tool_calls, call_ids, strict=False)
        ):
            text = arguments if isinstance(arguments, str) else json.dumps(arguments)
            events.append(ToolCallStart(index=index, id=call_id, name=name))
            events.extend(
                ToolCallDelta(index=index, arguments=piece) for piece in _chunks(text, self.chunk)
            )
            events.append(ToolCallEnd(index=index))
        events.extend(PartEvent(part=part) for part in self.parts)
        if self.usage is not None:
            events.append(self.usage)
        if self.error is None:
            events.append(StopEvent(reason="tool_use" if self.tool_calls else "end_turn"))
        return events


Step = Reply | Sequence[ProviderEvent] | Callable[[ModelRequest], "Reply | Sequence[ProviderEvent]"]


class ScriptedProvider:
    """Answers request *n* with step *n* of ``script``; records every request.

    A step is a :class:`Reply`, a list of events sent as they are, or a function of the
    request returning either. Running out of steps raises ``provider_error``.
    """

    name = "scripted"

    def __init__(self, script: Iterable[Step]) -> None:
        self._script = list(script)
        self.requests: list[ModelRequest] = []
        self._calls = 0

    @property
    def remaining(self) -> int:
        """Steps not used yet."""
        return len(self._script) - len(self.requests)

    def _next_ids(self, count: int) -> list[str]:
        ids = [f"call_{self._calls + i + 1}" for i in range(count)]
        self._calls += count
        return ids

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """Stream the next step's events."""
        index = len(self.requests)
        self.requests.append(request)
        if index >= len(self._script):
            raise ProviderFailed(
                f"the script has {len(self._script)} replies; request {index + 1} has none",
                provider=self.name,
            )
        step = self._script[index]
        if callable(step):
            step = step(request)
        if isinstance(step, Reply):
            events = step.events(self._next_ids(len(step.tool_calls)))
            delay, error = step.delay, step.error
        else:
            events, delay, error = list(step), 0.0, None
        for event in events:
            if delay:
                await anyio.sleep(delay)
            yield event
        if error is not None:
            raise error


class ReplayProvider(ScriptedProvider):
    """Plays a recorded conversation: line *n* of a JSONL file answers request *n*."""

    name = "replay"

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, delay: float = 0.0) -> ReplayProvider:
        """Read the recording; a malformed line is ``config_invalid`` naming the line."""
        file = Path(path)
        try:
            lines = file.read_text(encoding="utf-8").split("\n")
        except UnicodeDecodeError as exc:
            raise ConfigInvalid(
                f"the recording {file} is not UTF-8 (bad byte at offset {exc.start})",
                path=str(file),
            ) from None
        except OSError as exc:
            raise ConfigInvalid(
                f"cannot read the recording {file}: {exc.strerror}", path=str(file)
            ) from None
        replies = [
            _reply(line, number, file, delay)
            for number, line in enumerate(lines, 1)
            if line.strip()
        ]
        return cls(replies)


def _reply(line: str, number: int, file: Path, delay: float) -> Reply:
    def bad(message: str, field: str = "$") -> ConfigInvalid:
        return ConfigInvalid(
            f"{file}, line {number}: {message}", field=field, path=str(file), line=number
        )

    try:
        data = loads_strict(line)
    except JsonInputError as exc:
        raise bad(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise bad("expected an object")
    unknown = set(data) - {"text", "tool_calls", "delay_ms"}
    if unknown:
        raise bad(f"unknown field {sorted(unknown)[0]!r}", f"$.{sorted(unknown)[0]}")
    text = data.get("text", "")
    if not isinstance(text, str):
        raise bad("text must be a string", "$.text")
    calls: list[tuple[str, str | Mapping[str, Any]]] = []
    raw_calls = data.get("tool_calls", [])
    if not isinstance(raw_calls, list):
        raise bad("tool_calls must be an array", "$.tool_calls")
    for index, call in enumerate(raw_calls):
        where = f"$.tool_calls[{index}]"
        if (
            not isinstance(call, dict)
            or set(call) != {"name", "arguments"}
            or not isinstance(call["name"], str)
            or not isinstance(call["arguments"], dict | str)
        ):
            raise bad(
                'each tool call is {"name": <string>, "arguments": <object or JSON text>}', where
            )
        calls.append((call["name"], call["arguments"]))
    pause = data.get("delay_ms")
    if pause is not None and (
        not isinstance(pause, int) or isinstance(pause, bool) or not 0 <= pause <= MAX_DELAY_MS
    ):
        raise bad(f"delay_ms must be an integer from 0 to {MAX_DELAY_MS}", "$.delay_ms")
    return Reply(
        text=text, tool_calls=tuple(calls), delay=pause / 1000 if pause is not None else delay
    )


def replay_provider_record() -> ProviderRecord:
    """The ``replay`` provider as a config can select it: ``{"provider": "replay",
    "model": "<path of the JSONL recording>"}`` (relative to the working directory)."""

    def factory(model: Any, api_key: str | None = None, **_: Any) -> ReplayProvider:
        return ReplayProvider.from_file(Path(os.path.expanduser(model.model)))

    return ProviderRecord(name="replay", factory=factory)
