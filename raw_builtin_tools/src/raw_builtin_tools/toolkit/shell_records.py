"""The records and limits of a read Bash command: :class:`Program`, :class:`ShellCommand`,
:data:`COMMAND_FLAGS`, and the bounds :func:`~raw_builtin_tools.toolkit.parse_command`
reads within (docs/tools/bash.md, "Limits")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "COMMAND_FLAGS",
    "MAX_COMMAND_BYTES",
    "MAX_COMMAND_DEPTH",
    "MAX_COMMAND_NODES",
    "MAX_COMMAND_PROGRAMS",
    "MAX_PARSE_SECONDS",
    "Program",
    "ShellCommand",
]

MAX_COMMAND_BYTES: Final = 64 * 1024
"""UTF-8 bytes parsed for one command at most, the scripts inside it included."""
MAX_COMMAND_NODES: Final = 10_000
"""Syntax-tree nodes (tree-sitter's count) walked for one command at most."""
MAX_COMMAND_DEPTH: Final = 64
"""How deep the walk goes: syntax-tree levels (a chain such as ``a && b && c`` counts as
one level), plus one for each wrapper and each nested script."""
MAX_COMMAND_PROGRAMS: Final = 256
"""Programs listed for one command at most."""
MAX_PARSE_SECONDS: Final = 0.05
"""Time tree-sitter may spend parsing one command, nested scripts included. Valid Bash
parses in well under a millisecond per kilobyte; text that does not parse can make the
grammar's error recovery take time that grows with the square of its length (seconds for
a few tens of kilobytes of garbage). A parse still running at its deadline is stopped
(tree-sitter asks a progress callback as it goes; it may run a few tens of milliseconds
past the deadline between two asks), and the command is ``unparsed``."""

COMMAND_FLAGS: Final = ("unparsed", "dynamic", "dynamic_args", "dynamic_path")
"""What a command's ``flags`` may say, in this order:

* ``unparsed``: some of the text did not parse as Bash, or went past a limit; the programs
  listed are those that could be read.
* ``dynamic``: a program's name is not known before the command runs (``$cmd x``,
  ``$(echo rm) x``, ``r*m``), or a script it runs is not (``bash -c "$s"``, ``eval "$s"``,
  ``curl ... | sh``, ``bash <(curl ...)``).
* ``dynamic_args``: an argument is not known before the command runs (``rm "$f"``,
  ``xargs rm``, ``find -exec rm {} +``).
* ``dynamic_path``: a redirection writes to a path that is not known (``> "$log"``, or a
  relative path after a ``cd`` to a directory that is not known).
"""

_SAFE_QUOTE: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_{}~$*?[]^!"
)


@dataclass(frozen=True, slots=True)
class Program:
    """One program a command would run: its ``name`` as it would be looked up (``rm``
    for ``/bin/rm``, ``\\rm``, ``"rm"`` or ``r''m``), its arguments ``argv`` after quote
    removal (dynamic parts as written: ``$HOME``), and ``via``, the wrappers it runs
    under, outermost first (``("sudo", "xargs")``)."""

    name: str
    argv: tuple[str, ...] = ()
    via: tuple[str, ...] = ()

    @property
    def line(self) -> str:
        """The name and arguments as one line, a word in single quotes when it holds
        white space, a quote or a character such as ``;``, ``|``, ``&``, ``<``, ``>``,
        ``(`` or ``#`` (``git commit -m 'fix the build'``); glob characters are left as
        they are (``find . -name *.o -delete``)."""
        return " ".join(_quote(word) for word in (self.name, *self.argv))

    def to_effect(self) -> dict[str, Any]:
        """``{name, argv, line, via}``: the program as the bash tool's effects list it."""
        return {
            "name": self.name,
            "argv": list(self.argv),
            "line": self.line,
            "via": list(self.via),
        }


def _quote(word: str) -> str:
    if word and all(char in _SAFE_QUOTE or (char > "\x7f" and not char.isspace()) for char in word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


@dataclass(frozen=True, slots=True)
class ShellCommand:
    """What one command line would run (``programs``, in text order, each listed once)
    and write (``writes``: absolute, lexically normalized paths), with its ``flags`` (a
    subset of :data:`COMMAND_FLAGS`, in that order). ``parsed_bytes``, ``nodes``,
    ``depth`` and ``parse_seconds`` say how much work reading it took, within
    :data:`MAX_COMMAND_BYTES`, :data:`MAX_COMMAND_NODES`, :data:`MAX_COMMAND_DEPTH` and
    (give or take the overrun it allows) :data:`MAX_PARSE_SECONDS`."""

    programs: tuple[Program, ...]
    writes: tuple[str, ...]
    flags: tuple[str, ...]
    parsed_bytes: int
    nodes: int
    depth: int
    parse_seconds: float = field(default=0.0, compare=False)

    def to_effect(self) -> dict[str, Any]:
        """``{programs, flags}``: one entry of the bash tool's ``commands`` effects."""
        return {
            "programs": [program.to_effect() for program in self.programs],
            "flags": list(self.flags),
        }
