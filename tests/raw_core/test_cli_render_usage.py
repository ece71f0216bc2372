"""The terminal's line after a turn: the tokens the whole turn spent (over all its
requests) and the context's size at its last request."""

from __future__ import annotations

import io
from typing import Any

from raw_core.cli._render import TerminalRenderer


class Event:
    """An event as the renderer reads it: its JSON form."""

    def __init__(self, **data: Any) -> None:
        self._data = data

    def to_dict(self) -> dict[str, Any]:
        return dict(self._data)


def usage(tokens_in: int, tokens_out: int) -> Event:
    return Event(
        type="usage",
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        estimated_input_tokens=tokens_in - 10,
        context_window=1000,
    )


def test_a_turn_prints_the_tokens_of_all_its_requests_and_the_last_context() -> None:
    out, err = io.StringIO(), io.StringIO()
    renderer = TerminalRenderer(out, err, spinner=False)
    renderer(Event(type="turn_started", session_id="s"))
    renderer(usage(100, 20))
    renderer(usage(200, 10))
    renderer(Event(type="turn_ended", reason="completed", steps=2, error=None))
    assert err.getvalue() == (
        "(this turn: 300 tokens in, 30 out; context: 200 tokens as the provider counted them,"
        " 190 as raw estimated, of a 1,000-token window (20%))\n"
    )
    renderer(Event(type="turn_started", session_id="s"))
    renderer(usage(250, 5))
    renderer(Event(type="turn_ended", reason="completed", steps=1, error=None))
    assert err.getvalue().splitlines()[-1].startswith("(this turn: 250 tokens in, 5 out;")
