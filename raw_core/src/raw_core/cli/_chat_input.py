"""The chat prompt: line editing, history kept across sessions, and multi-line input on a
terminal (prompt_toolkit, imported only here, only for a chat on a terminal); plain lines
from standard input otherwise.

On a terminal (not a dumb one), Enter sends the prompt and Esc then Enter (or Alt-Enter)
starts a new line; the arrows move and Up recalls earlier prompts, from this chat and the
ones before it (the history file lives in raw's state folder, beside the sessions). Ctrl-C
at the prompt raises ``KeyboardInterrupt`` (the chat asks for a second press to quit);
Ctrl-D on an empty line is the end of input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from raw_core.cli._terminal import LineReader

__all__ = ["ChatInput", "history_path"]

PROMPT = "you> "


def history_path() -> Path:
    """Where the chat's prompt history is kept: ``chat_history`` in raw's state folder."""
    import platformdirs

    return Path(platformdirs.user_state_dir("raw", appauthor=False)) / "chat_history"


class ChatInput:
    """Reads the user's prompts: :meth:`read` returns one (possibly several lines), or
    ``None`` at the end of input."""

    def __init__(self, reader: LineReader, *, terminal: bool) -> None:
        self._reader = reader
        self._session: Any = _editor() if terminal else None

    async def read(self) -> str | None:
        """The next prompt; ``KeyboardInterrupt`` when Ctrl-C is pressed at a terminal's
        prompt (the line editor reads the key; on a dumb terminal the chat reads the
        plain line through :meth:`CtrlC.at_prompt`, which turns the SIGINT into it)."""
        if self._session is None:
            return await self._reader.readline(f"\n{PROMPT}")
        try:
            text: str = await self._session.prompt_async(PROMPT, handle_sigint=False)
        except EOFError:
            return None
        return text


def _editor() -> Any:
    """A prompt_toolkit prompt with the history file and the new-line keys."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings

    keys = KeyBindings()

    @keys.add("escape", "enter")
    def _new_line(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    path = history_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        history: Any = FileHistory(str(path))
    except OSError:  # a read-only state folder: history for this chat only
        history = InMemoryHistory()
    return PromptSession(history=history, key_bindings=keys, multiline=False)
