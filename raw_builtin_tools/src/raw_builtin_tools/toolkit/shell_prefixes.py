"""The reserved words before a pipeline that tree-sitter-bash misreads: ``time``,
``coproc`` and a second ``!``.

In Bash, ``time [-p] [--]`` and ``!`` prefix a pipeline, and ``coproc [NAME]`` a
command; what follows may be a compound command (``{ ...; }``, ``( ... )``, ``if``,
``for``, ``while``, ``until``, ``case``, ``select``, ``[[``, ``function``). The grammar
knows ``!`` only once, at the start of a pipeline, and ``time`` and ``coproc`` not at all:
it reads ``time { rm a; }`` as a simple command ``time`` with the words ``{ rm a`` then a
command ``}``, ``time if true; then rm a; fi`` as ``time if true``, ``then rm a`` and
``fi``, ``time ! rm a`` or ``! ! rm a`` as a program ``!`` given ``rm a``, and even its
own ``!`` before a group (``! { rm a; }``) as a program ``{``. Read so, the programs
inside would be mere words.

:func:`find_prefixes` finds each such prefix in a parsed tree: a ``time``, ``coproc`` or
``!`` word that is a command's first word (Bash reads it as a reserved word only there),
followed by a compound command, by ``!``, or (after ``coproc``) by a NAME and a compound
command; or the grammar's own ``!`` followed by a compound command. :func:`blank`
overwrites the prefix's words with spaces, the same length, so every byte offset still
points into the real text: parsed again, the text gives the tree Bash reads
(:func:`read_prefixes` does both, until no prefix is left). The ``time`` and ``coproc``
of a prefix are kept as :class:`Prefix` ``wrappers``, to be listed with the programs
inside (``via``).

A prefix after an assignment or a redirection (``x=1 time { rm a; }``) is left alone: Bash
does not read ``time`` as a reserved word there either, and the ``}`` it then meets is a
syntax error (``unparsed``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "MAX_PREFIX_CANDIDATES",
    "MAX_PREFIX_ROUNDS",
    "Prefix",
    "Wrappers",
    "blank",
    "find_prefixes",
    "may_hold_prefix",
    "read_prefixes",
]

MAX_PREFIX_CANDIDATES: Final = 256
"""Words ``time``, ``coproc`` or ``!`` looked up in one tree at most; past that the
command is ``unparsed``."""

MAX_PREFIX_ROUNDS: Final = 4
"""Parses again at most, each with the prefixes found so far blanked (a prefix inside a
blanked prefix's command shows only then: ``time { time { ...; }; }``); past that the
command is ``unparsed``."""

Wrappers = tuple[tuple[str, tuple[str, ...]], ...]

# A candidate: the word alone, after the start or a character that ends a word.
_CANDIDATE: Final = re.compile(rb"(?<![^ \t\n;&|(){}`])(?:time|coproc|!)(?![^ \t\n;&|()<>])")
_WORD: Final = re.compile(rb"[^ \t\n;&|()<>]*")
_SPACE: Final = re.compile(rb"(?:[ \t]|\\\n)*")
_NAME: Final = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_COMPOUND_WORDS: Final = frozenset(
    {b"{", b"if", b"for", b"while", b"until", b"case", b"select", b"function", b"[["}
)


@dataclass(frozen=True, slots=True)
class Prefix:
    """One prefix: the byte ranges of its words (``spans``), where the command it
    prefixes starts (``body``), and the wrappers it names, outermost first, each with its
    words (``("time", ("-p",))``, ``("coproc", ("NAME",))``)."""

    spans: tuple[tuple[int, int], ...]
    body: int
    wrappers: Wrappers


def may_hold_prefix(data: bytes) -> bool:
    """Whether ``data`` holds a word ``time``, ``coproc`` or ``!`` at all (a cheap test
    before looking at the tree)."""
    return _CANDIDATE.search(data) is not None


def _compound_at(data: bytes, position: int) -> bool:
    if data[position : position + 1] == b"(":
        return True
    word = _WORD.match(data, position)
    return word is not None and word.group() in _COMPOUND_WORDS


def _read(data: bytes, start: int) -> Prefix | None:
    """The prefix whose first word starts at ``start``, or ``None`` when what follows is
    a simple command, which the grammar reads as Bash does (``time rm a``)."""
    spans: list[tuple[int, int]] = []
    wrappers: list[tuple[str, tuple[str, ...]]] = []
    negated = False
    position = start
    while True:
        match = _WORD.match(data, position)
        word = match.group() if match is not None else b""
        end = position + len(word)
        if word == b"time":
            spans.append((position, end))
            options: list[str] = []
            position = _SPACE.match(data, end).end()  # type: ignore[union-attr]
            for option in (b"-p", b"--"):
                found = _WORD.match(data, position)
                if found is not None and found.group() == option:
                    spans.append((position, found.end()))
                    options.append(option.decode())
                    position = _SPACE.match(data, found.end()).end()  # type: ignore[union-attr]
            wrappers.append(("time", tuple(options)))
            continue
        if word == b"coproc":
            spans.append((position, end))
            position = _SPACE.match(data, end).end()  # type: ignore[union-attr]
            argv: tuple[str, ...] = ()
            name = _NAME.match(data, position)
            if (
                name is not None
                and name.group() not in (b"time", b"coproc")
                and not _compound_at(data, position)
            ):
                after = _SPACE.match(data, name.end()).end()  # type: ignore[union-attr]
                if after > name.end() and _compound_at(data, after):
                    spans.append((position, name.end()))
                    argv = (name.group().decode(),)
                    position = after
            wrappers.append(("coproc", argv))
            continue
        if word == b"!":
            spans.append((position, end))
            negated = True
            position = _SPACE.match(data, end).end()  # type: ignore[union-attr]
            continue
        break
    if not negated and not _compound_at(data, position):
        return None
    return Prefix(tuple(spans), position, tuple(wrappers))


def find_prefixes(root: Any, data: bytes) -> tuple[list[Prefix], bool]:
    """The prefixes in the tree ``root`` of ``data``, and whether there were more
    candidates than :data:`MAX_PREFIX_CANDIDATES` (the rest not looked at)."""
    found: list[Prefix] = []
    covered = -1  # the end of the last prefix: its own words are not candidates again
    for index, match in enumerate(_CANDIDATE.finditer(data)):
        if index >= MAX_PREFIX_CANDIDATES:
            return found, True
        start, end = match.span()
        if start < covered:
            continue
        prefix = _read(data, start)  # lexical first: it is cheaper than the tree
        if prefix is None or (len(prefix.spans) == 1 and not _compound_at(data, prefix.body)):
            continue  # `time rm a`, `! rm a`: the grammar reads them as Bash does
        node = root.descendant_for_byte_range(start, end)
        if node is None or node.start_byte != start or node.end_byte != end:
            continue
        parent = node.parent
        if parent is None:
            continue
        if node.type == "!":
            if parent.type != "negated_command":
                continue
        elif node.type == "word" and parent.type == "command_name":
            command = parent.parent
            if command is None or command.start_byte != start:
                continue  # after an assignment or a redirection: not a reserved word
        else:
            continue
        found.append(prefix)
        covered = prefix.body
    return found, False


def blank(data: bytes, prefixes: list[Prefix]) -> bytes:
    """``data`` with the words of ``prefixes`` overwritten by spaces."""
    text = bytearray(data)
    for prefix in prefixes:
        for start, end in prefix.spans:
            text[start:end] = b" " * (end - start)
    return bytes(text)


def read_prefixes(
    tree: Any, data: bytes, parse: Callable[[bytes], Any]
) -> tuple[Any, bytes, dict[int, Wrappers], bool]:
    """Parse ``data`` again with ``parse`` until ``tree`` holds no prefix. Return the last
    tree that parsed (``None`` only when ``tree`` is), the text it was parsed from, the
    wrappers of each prefix by where its command starts, and whether a limit was reached
    (:data:`MAX_PREFIX_CANDIDATES`, :data:`MAX_PREFIX_ROUNDS`, or a parse that ran out of
    time). A parse that runs out of time leaves the tree before it: what that tree read is
    kept, as past any other limit, and the command is ``unparsed``."""
    wrappers: dict[int, Wrappers] = {}
    rounds = 0
    while tree is not None and may_hold_prefix(data):
        found, more = find_prefixes(tree.root_node, data)
        if not found or rounds == MAX_PREFIX_ROUNDS:
            return tree, data, wrappers, more or bool(found)
        rounds += 1
        blanked = blank(data, found)
        again = parse(blanked)
        if again is None:
            return tree, data, wrappers, True
        wrappers.update((prefix.body, prefix.wrappers) for prefix in found if prefix.wrappers)
        tree, data = again, blanked
        if more:
            return tree, data, wrappers, True
    return tree, data, wrappers, False
