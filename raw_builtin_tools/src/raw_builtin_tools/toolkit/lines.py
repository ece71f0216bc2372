"""Lines as an editor shows them: split on ``\\n`` only.

``str.splitlines()`` also breaks on form feed, U+2028 and a dozen other characters, which
would make line numbers disagree with every editor; these helpers split on ``\\n`` alone.
A final ``\\n`` ends the last line rather than starting an empty one, so ``"a\\nb\\n"`` has
two lines and ``""`` has none. A ``\\r`` before the ``\\n`` stays part of the line.
"""

from __future__ import annotations

__all__ = ["join_lines", "split_lines", "surrogate_problem"]


def split_lines(text: str) -> tuple[list[str], bool]:
    """``(lines, ends_with_newline)`` of ``text``; ``join_lines`` is its inverse."""
    if not text:
        return [], False
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
        return lines, True
    return lines, False


def join_lines(lines: list[str], ends_with_newline: bool) -> str:
    """The text of ``lines``; a final newline is written only when there is a line to end."""
    if not lines:
        return ""
    return "\n".join(lines) + ("\n" if ends_with_newline else "")


def surrogate_problem(text: str) -> str | None:
    """Why ``text`` cannot be written as UTF-8, or ``None``.

    JSON lets a lone surrogate (``"\\ud800"``) through; no UTF-8 file, path or command line
    can hold one.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"holds a lone surrogate (U+{ord(text[exc.start]):04X}) at character {exc.start},"
            " which UTF-8 cannot encode"
        )
    return None
