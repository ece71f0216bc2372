"""Programs that run another program: where, in their arguments, that program is.

``sudo -u root rm x`` runs ``rm x``; ``find . -exec rm {} \\;`` runs ``rm`` once per file;
``bash -c 'rm x'``, ``eval 'rm x'`` and ``trap 'rm x' EXIT`` run a script. :func:`unwrap`
reads a wrapper's options the way the wrapper does (which options take a value) and says
what it runs:

* :class:`Run`: a program and its arguments, as words;
* :class:`Script`: shell text, to be parsed in turn;
* :class:`Stdin`: a shell that reads its script from its standard input;
* :class:`Unknown`: a script that is the output of a program (``bash <(curl ...)``).

Everything is lexical: options are read from the words as written, nothing is looked up.
A wrapper used in a way that runs nothing (``command -v rm``, ``sudo -l``, ``env`` alone,
``bash script.sh``: a file, not text) gives no step. :data:`WRAPPERS` names them all; the
docs list them (docs/tools/bash.md, "Wrappers").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from raw_builtin_tools.toolkit.shell_words import Word

__all__ = [
    "COMMAND_WRAPPERS",
    "WRAPPERS",
    "Run",
    "Script",
    "Stdin",
    "Step",
    "Unknown",
    "unwrap",
]


@dataclass(frozen=True, slots=True)
class Run:
    """Run ``words`` (a program, then its arguments). Words holding ``placeholder`` are
    filled in when it runs (``find``'s ``{}``, ``xargs -I``); with ``appended``, more
    arguments are added then (``xargs``). ``cwd``: the directory it runs in, when the
    wrapper changes it (``env -C``, ``sudo -D``)."""

    words: tuple[Word, ...]
    placeholder: str | None = None
    appended: bool = False
    cwd: Word | None = None


@dataclass(frozen=True, slots=True)
class Script:
    """Run ``text`` as a shell script (``bash -c``, ``eval``, ``watch``). ``appended``:
    arguments are added when it runs (``parallel``)."""

    text: Word
    appended: bool = False
    cwd: Word | None = None


@dataclass(frozen=True, slots=True)
class Stdin:
    """A shell reading its script from standard input (``bash``, ``sh -s``)."""


@dataclass(frozen=True, slots=True)
class Unknown:
    """A script read from a file that is the output of a program: a process substitution
    (``bash <(curl ...)``, ``source <(...)``), as unknown as ``curl ... | sh``."""


Step = Run | Script | Stdin | Unknown
_STDIN_FILES: Final = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True, slots=True)
class _Options:
    """Which options of a wrapper take a value: short letters (``-u root``, ``-uroot``)
    and long names (``--user root``; ``--user=root`` always has its value)."""

    short: str = ""
    long: frozenset[str] = frozenset()
    assignments: bool = False  # NAME=VALUE words may come before the program (env, sudo)


def _options(args: Sequence[Word], spec: _Options) -> tuple[int, dict[str, Word | None]]:
    """The index of the first operand, and the options before it (``-u``, ``--user``,
    each with its value or ``None``)."""
    seen: dict[str, Word | None] = {}
    index = 0
    while index < len(args):
        text = args[index].text
        if text == "--":
            return index + 1, seen
        if text.startswith("--"):
            name, equals, value = text.partition("=")
            if equals:
                seen[name] = Word(value, args[index].dynamic)
                index += 1
            elif name[2:] in spec.long:
                seen[name] = args[index + 1] if index + 1 < len(args) else None
                index += 2
            else:
                seen[name] = None
                index += 1
            continue
        if len(text) > 1 and text.startswith("-"):
            index += 1
            for position, letter in enumerate(text[1:], start=1):
                if letter in spec.short:
                    rest = text[position + 1 :]
                    if rest:
                        seen["-" + letter] = Word(rest, args[index - 1].dynamic)
                    else:
                        seen["-" + letter] = args[index] if index < len(args) else None
                        index += 1
                    break
                seen["-" + letter] = None
            continue
        if spec.assignments and _ASSIGNMENT.match(text):
            index += 1
            continue
        return index, seen
    return index, seen


def _join(words: Sequence[Word]) -> Word:
    """Words a wrapper joins with spaces into one script (``eval a b``, ``watch a b``)."""
    return Word(
        " ".join(word.text for word in words),
        dynamic=any(word.dynamic or word.pattern for word in words),
    )


_Reader = Callable[[Sequence[Word]], list[Step]]


def _run_after(spec: _Options, skip: int = 0, stop: str = "") -> _Reader:
    """A wrapper that runs its first operand after ``skip`` more operands (``timeout 5
    cmd``: one), unless one of the ``stop`` options is given (they make it run nothing)."""

    def unwrap_it(args: Sequence[Word]) -> list[Step]:
        start, seen = _options(args, spec)
        if any("-" + letter in seen for letter in stop):
            return []
        words = tuple(args[start + skip :])
        return [Run(words)] if words else []

    return unwrap_it


_SUDO: Final = _Options(
    short="ugpCrtUTDRh",
    long=frozenset(
        {
            "user", "group", "prompt", "close-from", "role", "type", "other-user",
            "command-timeout", "chdir", "chroot", "host",
        }
    ),
    assignments=True,
)  # fmt: skip


def _sudo(args: Sequence[Word]) -> list[Step]:
    start, seen = _options(args, _SUDO)
    if any(flag in seen for flag in ("-e", "--edit", "-l", "--list", "-v", "--validate", "-K")):
        return []
    words = tuple(args[start:])
    cwd = seen.get("-D") or seen.get("--chdir")
    return [Run(words, cwd=cwd)] if words else []


_ENV: Final = _Options(
    short="uCSP", long=frozenset({"unset", "chdir", "split-string"}), assignments=True
)


def _env(args: Sequence[Word]) -> list[Step]:
    start = 0
    while start < len(args) and args[start].text == "-":  # "env -": an empty environment
        start += 1
    offset, seen = _options(args[start:], _ENV)
    start += offset
    cwd = seen.get("-C") or seen.get("--chdir")
    split = seen.get("-S") or seen.get("--split-string")
    if split is not None:
        return [Script(_join([split, *args[start:]]), cwd=cwd)]
    words = tuple(args[start:])
    return [Run(words, cwd=cwd)] if words else []


def _command(args: Sequence[Word]) -> list[Step]:
    start, seen = _options(args, _Options())
    if "-v" in seen or "-V" in seen:
        return []  # it says what the name is; it runs nothing
    words = tuple(args[start:])
    return [Run(words)] if words else []


_XARGS: Final = _Options(
    short="adEILnPs",
    long=frozenset(
        {"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"}
    ),
)


def _xargs(args: Sequence[Word]) -> list[Step]:
    start, seen = _options(args, _XARGS)
    replace = seen.get("-I") or seen.get("--replace")
    placeholder = replace.text if replace is not None else None
    if placeholder is None and ("-i" in seen or "--replace" in seen):
        # -i takes its replacement string attached, or none: "{}"
        attached = [w.text[2:] for w in args[:start] if w.text.startswith("-i")]
        placeholder = next((text for text in attached if text), "{}")
    words = tuple(args[start:]) or (Word("echo"),)
    return [Run(words, placeholder=placeholder, appended=placeholder is None)]


_FIND_ACTIONS: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _find(args: Sequence[Word]) -> list[Step]:
    steps: list[Step] = []
    index = 0
    while index < len(args):
        if args[index].text not in _FIND_ACTIONS:
            index += 1
            continue
        index += 1
        words: list[Word] = []
        while index < len(args):
            text = args[index].text
            if text == ";" or (text == "+" and words and words[-1].text == "{}"):
                break
            words.append(args[index])
            index += 1
        index += 1
        if words:
            steps.append(Run(tuple(words), placeholder="{}"))
    return steps


_PARALLEL: Final = _Options(
    short="aCdEIjJLnNPSs",
    long=frozenset(
        {
            "arg-file", "colsep", "delimiter", "eof", "jobs", "sshlogin", "max-args",
            "max-lines", "max-procs", "profile", "joblog", "results", "tmpdir", "workdir",
            "timeout", "delay", "retries", "tag-string", "basefile", "env", "memfree",
            "load", "nice", "halt", "resume", "max-chars", "replace",
        }
    ),
)  # fmt: skip
_SOURCES: Final = frozenset({":::", "::::", ":::+", "::::+"})


def _parallel(args: Sequence[Word]) -> list[Step]:
    start, _seen = _options(args, _PARALLEL)
    command: list[Word] = []
    index = start
    while index < len(args) and args[index].text not in _SOURCES:
        command.append(args[index])
        index += 1
    if command:
        return [Script(_join(command), appended=True)]
    # No command: each input is a command line of its own (`parallel ::: "rm a" "ls"`).
    inputs = [word for word in args[index:] if word.text not in _SOURCES]
    if not inputs:
        return [Stdin()]
    return [Script(word) for word in inputs]


def _watch(args: Sequence[Word]) -> list[Step]:
    start, seen = _options(args, _Options(short="nq", long=frozenset({"interval"})))
    words = tuple(args[start:])
    if not words:
        return []
    if "-x" in seen or "--exec" in seen:
        return [Run(words)]
    return [Script(_join(words))]


def _eval(args: Sequence[Word]) -> list[Step]:
    return [Script(_join(args))] if args else []


def _trap(args: Sequence[Word]) -> list[Step]:
    """``trap 'rm x' EXIT``: a script the shell runs later, on a signal or on exit. Nothing
    with ``-p``, ``-l`` or ``-P``, with a single operand, or with a first operand ``-``,
    ``''`` or a signal number (they reset or ignore the signals)."""
    start, seen = _options(args, _NONE)
    if seen:
        return []
    operands = args[start:]
    if len(operands) < 2:
        return []
    action = operands[0]
    if action.literal and (action.text in ("", "-") or action.text.isdigit()):
        return []
    return [Script(action)]


def _shell(args: Sequence[Word]) -> list[Step]:
    """``bash -c TEXT``, ``sh -lc TEXT``, ``bash <<EOF``: a script given as text; a script
    named by file (``bash run.sh``) is not read."""
    index = 0
    text_mode = from_stdin = False
    while index < len(args):
        text = args[index].text
        if text in ("--", "-"):
            index += 1
            break
        if text.startswith("--"):
            index += 2 if text in ("--rcfile", "--init-file") else 1
            continue
        if len(text) > 1 and text[0] in "-+":
            letters = text[1:]
            text_mode = text_mode or "c" in letters
            from_stdin = from_stdin or "s" in letters
            index += 1 + sum(1 for letter in letters if letter in "oO")
            continue
        break
    if text_mode:
        return [Script(args[index])] if index < len(args) else []
    if index < len(args) and not from_stdin:
        return _script_file(args[index])
    return [Stdin()]


def _script_file(word: Word) -> list[Step]:
    """A script named by a file: not read (``bash run.sh``), unless the file is standard
    input (``/dev/stdin``) or the output of a program (``<(curl ...)``)."""
    if word.literal and word.text in _STDIN_FILES:
        return [Stdin()]
    if word.dynamic and word.text.startswith("<("):
        return [Unknown()]
    return []


def _source(args: Sequence[Word]) -> list[Step]:
    """``source FILE`` and ``. FILE``: see :func:`_script_file`."""
    start = 1 if args and args[0].text == "--" else 0
    return _script_file(args[start]) if start < len(args) else []


def _su(args: Sequence[Word]) -> list[Step]:
    _start, seen = _options(args, _Options(short="cgGsw", long=frozenset({"command", "shell"})))
    text = seen.get("-c") or seen.get("--command") or seen.get("--session-command")
    return [Script(text)] if text is not None else []


def _tasks(args: Sequence[Word]) -> list[Step]:
    start, seen = _options(args, _Options())
    if "-p" in seen or "--pid" in seen:
        return []
    words = tuple(args[start + 1 :])  # after the CPU mask or list
    return [Run(words)] if words else []


_TIME: Final = _Options(short="fo", long=frozenset({"format", "output"}))
_NONE: Final = _Options()

WRAPPERS: Final[dict[str, _Reader]] = {
    "sudo": _sudo,
    "doas": _run_after(_Options(short="uC"), stop="C"),
    "env": _env,
    "command": _command,
    "builtin": _run_after(_NONE),
    "exec": _run_after(_Options(short="a")),
    "nice": _run_after(_Options(short="n", long=frozenset({"adjustment"}))),
    "ionice": _run_after(_Options(short="cnpPu"), stop="pPu"),
    "nohup": _run_after(_NONE),
    "setsid": _run_after(_NONE),
    "time": _run_after(_TIME),
    "timeout": _run_after(_Options(short="ks", long=frozenset({"kill-after", "signal"})), 1),
    "stdbuf": _run_after(_Options(short="ioe", long=frozenset({"input", "output", "error"}))),
    "chroot": _run_after(_Options(long=frozenset({"userspec", "groups"})), 1),
    "taskset": _tasks,
    "unbuffer": _run_after(_NONE),
    "coproc": _run_after(_NONE),
    "busybox": _run_after(_NONE),
    "xargs": _xargs,
    "find": _find,
    "parallel": _parallel,
    "watch": _watch,
    "eval": _eval,
    "trap": _trap,
    "source": _source,
    ".": _source,
    "su": _su,
    "bash": _shell,
    "sh": _shell,
    "dash": _shell,
    "zsh": _shell,
    "ksh": _shell,
    "mksh": _shell,
    "ash": _shell,
}
"""Each wrapper by program name, with the function that reads its arguments."""

COMMAND_WRAPPERS: Final = frozenset(WRAPPERS)
"""The names of the programs whose arguments are read for the program they run."""


def unwrap(name: str, args: Sequence[Word]) -> list[Step]:
    """What the program ``name`` run with ``args`` runs in turn (nothing for a program
    that is not a wrapper)."""
    reader = WRAPPERS.get(name)
    return reader(args) if reader is not None else []
