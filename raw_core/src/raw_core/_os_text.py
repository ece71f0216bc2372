"""Whether a string can be handed to the operating system — as an environment variable's
name, a path, a program or one of its arguments — as raw checks it when a config or a hook
folder is read, so that using the string later cannot fail."""

from __future__ import annotations

__all__ = ["unfit_for_os"]


def unfit_for_os(text: str) -> str | None:
    """What in ``text`` the operating system cannot take, in words, or ``None``: a NUL
    character, or a lone surrogate (strict JSON lets ``\\ud800`` through, but it is no
    UTF-8 text)."""
    if "\0" in text:
        return "a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "a lone surrogate, which is not UTF-8 text"
    return None
