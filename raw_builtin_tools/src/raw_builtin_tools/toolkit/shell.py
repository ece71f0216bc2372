"""What a Bash command line would run and write, read from its syntax tree.

:func:`parse_command` parses the text with tree-sitter-bash and walks every simple
command in it — through pipelines, lists, subshells, command and process substitutions,
function bodies, ``if``/``for``/``while``/``case`` bodies and the scripts of ``bash -c``,
``eval`` and the other :data:`~raw_builtin_tools.toolkit.COMMAND_WRAPPERS` — into the
programs it names (:class:`Program`: the name as it would be looked up, the arguments
after quote removal, the wrappers it runs under) and the files its redirections write.
Where the grammar misreads Bash — ``time``, ``coproc`` or a second ``!`` before a command,
which may be compound (``time { rm a; }``) — those reserved words are blanked out and the
text is parsed again (:mod:`raw_builtin_tools.toolkit.shell_prefixes`).

It is lexical, like every intended effect: it reads no file and runs nothing. A function
body, or both branches of an ``if``, are listed whether or not they would run. What it
cannot know it says with :data:`COMMAND_FLAGS`: a command that did not parse, or went
past the limits, is ``unparsed``; a program whose name comes from an expansion is
``dynamic``.

The work is bounded (docs/tools/bash.md, "Limits"): at most
:data:`MAX_COMMAND_BYTES` of text are parsed for one command, nested scripts included; a
parse whose tree would take the total past :data:`MAX_COMMAND_NODES` nodes is not walked
(tree-sitter counts a tree's nodes without walking it); nothing deeper than
:data:`MAX_COMMAND_DEPTH` is read; at most :data:`MAX_COMMAND_PROGRAMS` programs are
listed; tree-sitter parses for at most :data:`MAX_PARSE_SECONDS`. Past any of them the
command is ``unparsed``. The walk uses an explicit stack, so no input can exhaust Python's
recursion limit. The records and limits are in
:mod:`raw_builtin_tools.toolkit.shell_records`.
"""

from __future__ import annotations

import itertools
from typing import Any, Final

from raw_builtin_tools.toolkit.paths import normalize
from raw_builtin_tools.toolkit.shell_parser import parse_within
from raw_builtin_tools.toolkit.shell_prefixes import Wrappers, read_prefixes
from raw_builtin_tools.toolkit.shell_records import (
    COMMAND_FLAGS,
    MAX_COMMAND_BYTES,
    MAX_COMMAND_DEPTH,
    MAX_COMMAND_NODES,
    MAX_COMMAND_PROGRAMS,
    MAX_PARSE_SECONDS,
    Program,
    ShellCommand,
)
from raw_builtin_tools.toolkit.shell_words import (
    Word,
    argument_text,
    heredoc_value,
    herestring_value,
    join_words,
    piped_heredoc,
    program_name,
    word_value,
)
from raw_builtin_tools.toolkit.wrappers import Run, Script, Stdin, Unknown, unwrap

__all__ = ["parse_command"]

_WRITES: Final = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_DEVICES: Final = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
# Nodes that hold no command, substitution or redirection: not walked.
_LEAVES: Final = frozenset(
    {
        "word", "number", "string_content", "raw_string", "ansi_c_string", "variable_name",
        "special_variable_name", "heredoc_content", "heredoc_start", "heredoc_end",
        "file_descriptor", "test_operator", "regex", "extglob_pattern", "comment",
    }
)  # fmt: skip
# Nodes the grammar nests to make a chain (a && b && c, 1 + 2 + 3): one level in all.
_CHAINS: Final = frozenset({"list", "binary_expression"})
_NEW_SCOPE: Final = frozenset(
    {"subshell", "command_substitution", "process_substitution", "function_definition"}
)
# Nodes that start where their first child does and are not one command: a prefix found
# at that byte belongs to the first command inside them.
_SEQUENCES: Final = frozenset({"program", "list"})
# Unquoted, as a command's name, these are reserved words in Bash: the grammar read them
# as programs only where it misread the text (`echo time { x; }` gives a command `}`).
_MISREAD: Final = frozenset(
    {
        b"{", b"}", b"!", b"if", b"then", b"elif", b"else", b"fi", b"for", b"while",
        b"until", b"do", b"done", b"case", b"esac", b"select", b"function", b"[[",
    }
)  # fmt: skip
_DIRECTORY_BUILTINS: Final = frozenset({"cd", "pushd", "popd"})
_DIRECTORY_WORDS: Final = _DIRECTORY_BUILTINS | {"builtin", "command"}


class _Scope:
    """The directory relative paths resolve against, in one shell; ``known`` is false
    once a ``cd`` went somewhere that cannot be known."""

    __slots__ = ("cwd", "known")

    def __init__(self, cwd: str, known: bool = True) -> None:
        self.cwd = cwd
        self.known = known

    def copy(self) -> _Scope:
        return _Scope(self.cwd, self.known)


# What standard input a command reads: None (the tool's /dev/null, or whatever the
# enclosing shell has), "pipe", "file", or the Word of a here-document or here-string.
_Input = Word | str | None


class _Reader:
    """One command's walk: what it found so far and the budget it has used."""

    def __init__(self, home: str | None, max_bytes: int, max_nodes: int, seconds: float) -> None:
        self.home = home
        self.max_bytes = max_bytes
        self.max_nodes = max_nodes
        self.seconds = seconds  # parse time left
        self.spent = 0.0
        self.programs: list[Program] = []
        self.seen: set[tuple[str, tuple[str, ...], tuple[str, ...]]] = set()
        self.writes: dict[str, None] = {}
        self.flags: set[str] = set()
        self.bytes = 0
        self.nodes = 0
        self.depth = 0

    def result(self) -> ShellCommand:
        return ShellCommand(
            programs=tuple(self.programs),
            writes=tuple(self.writes),
            flags=tuple(flag for flag in COMMAND_FLAGS if flag in self.flags),
            parsed_bytes=self.bytes,
            nodes=self.nodes,
            depth=self.depth,
            parse_seconds=self.spent,
        )

    # --- parsing a script ----------------------------------------------------------

    def script(self, text: str, scope: _Scope, depth: int, via: tuple[str, ...]) -> None:
        data = text.encode("utf-8", "replace")
        if self.bytes + len(data) > self.max_bytes or depth > MAX_COMMAND_DEPTH:
            self.flags.add("unparsed")
            return
        self.bytes += len(data)
        tree = self.parse(data)
        # `time { ...; }`, `coproc NAME while ...`, `! ! cmd`: parsed again with the reserved
        # words the grammar misreads blanked out (see shell_prefixes).
        tree, _blanked, prefixes, limited = read_prefixes(tree, data, self.parse)
        if limited:
            self.flags.add("unparsed")
        if tree is None:
            self.flags.add("unparsed")
            return
        root = tree.root_node
        count = root.descendant_count
        if self.nodes + count > self.max_nodes:
            self.flags.add("unparsed")
            return
        self.nodes += count
        if root.has_error:
            self.flags.add("unparsed")
        self.walk(root, data, scope, depth, via, prefixes)  # words read from the real text

    def parse(self, data: bytes) -> Any:
        """The tree of ``data``, or ``None`` when the parse ran out of time."""
        tree, elapsed = parse_within(data, self.seconds)
        self.spent += elapsed
        self.seconds = max(0.0, self.seconds - elapsed)
        return tree

    def walk(
        self,
        root: Any,
        source: bytes,
        scope: _Scope,
        depth: int,
        via: tuple[str, ...],
        prefixes: dict[int, Wrappers],
    ) -> None:
        """Read every command under ``root``. ``prefixes``: the wrappers (``time``,
        ``coproc``) blanked out before the command starting at each byte, which it and
        everything in it run under."""
        # Entries: (node, scope, depth, stdin, via). A node None is a `cd` to apply to the
        # scope once everything before it is read: stdin then holds (directory, known).
        stack: list[tuple[Any, _Scope, int, Any, tuple[str, ...]]] = [
            (root, scope, depth, None, via)
        ]
        while stack:
            node, scope, depth, extra, via = stack.pop()
            if node is None:
                scope.cwd, scope.known = extra
                continue
            if depth > MAX_COMMAND_DEPTH:
                self.flags.add("unparsed")
                continue
            if depth > self.depth:
                self.depth = depth
            kind = node.type
            if prefixes and kind not in _SEQUENCES and node.start_byte in prefixes:
                for name, argv in prefixes.pop(node.start_byte):
                    self.listed(name, argv, via)
                    via = (*via, name)
            stdin: _Input = None
            read: frozenset[int] = frozenset()  # start bytes of children with nothing inside
            if kind == "command":
                change, read = self.command(node, source, scope, depth, extra, via)
                if change is not None:
                    stack.append((None, scope, depth, change, via))
            elif kind == "file_redirect":
                self.redirect(node, source, scope)
            elif kind == "redirected_statement":
                stdin = self.statement_input(node, source, extra)
            elif kind == "heredoc_redirect":
                # `cat <<EOF | sh`: the grammar puts `| sh` inside the here-document's node.
                piped = piped_heredoc(node, source)
            elif kind in ("declaration_command", "unset_command"):
                self.declaration(node, source, via)
            inner = scope.copy() if kind in _NEW_SCOPE else scope
            children = node.children
            kinds = [child.type for child in children]
            pending: list[tuple[Any, _Scope, int, Any, tuple[str, ...]]] = []
            first = True
            last = len(children) - 1
            for index, child in enumerate(children):
                child_kind = kinds[index]
                if child_kind in _LEAVES or not child.is_named:
                    continue
                if read and child.start_byte in read:
                    continue
                child_scope, child_stdin = inner, stdin
                if index < last and kinds[index + 1] == "&":
                    child_scope = scope.copy()  # run in the background: a subshell
                if kind == "pipeline":
                    child_scope = scope.copy()  # each stage runs in a subshell
                    child_stdin = extra if first else "pipe"
                    first = False
                elif kind == "heredoc_redirect" and child_kind == "pipeline":
                    child_stdin = piped
                step = 0 if child_kind == kind and kind in _CHAINS else 1
                pending.append((child, child_scope, depth + step, child_stdin, via))
            stack.extend(reversed(pending))

    # --- simple commands -------------------------------------------------------------

    def command(
        self,
        node: Any,
        source: bytes,
        scope: _Scope,
        depth: int,
        stdin: _Input,
        via: tuple[str, ...],
    ) -> tuple[tuple[str, bool] | None, frozenset[int]]:
        """Read one simple command. Return the directory change it makes, if any, and the
        start bytes of its words that hold no substitution (nothing to walk into)."""
        name = node.child_by_field_name("name")
        if name is None:
            return None, frozenset()
        if (
            name.end_byte - name.start_byte <= 8
            and source[name.start_byte : name.end_byte] in _MISREAD
        ):
            self.flags.add("unparsed")  # a reserved word the grammar took for a program
        parts = [name, *node.children_by_field_name("argument")]
        for redirect in node.children_by_field_name("redirect"):
            if redirect.type == "herestring_redirect":
                stdin = herestring_value(redirect, source)
        words = [word_value(parts[0], source)]
        plain = [part.start_byte for part, word in zip(parts[:1], words, strict=True)
                 if not word.dynamic]  # fmt: skip
        for previous, part in itertools.pairwise(parts):
            value = word_value(part, source)
            if not value.dynamic:
                plain.append(part.start_byte)
            if source[previous.end_byte : part.start_byte] == b"\\\n":
                words[-1] = join_words(words[-1], value)  # Bash reads r\<newline>m as rm
            else:
                words.append(value)
        self.run(words, via, scope, depth, stdin)
        return self.directory(words, scope), frozenset(plain)

    def run(
        self,
        words: list[Word] | tuple[Word, ...],
        via: tuple[str, ...],
        scope: _Scope,
        depth: int,
        stdin: _Input,
        placeholder: str | None = None,
        appended: bool = False,
    ) -> None:
        """List the program ``words`` run, and whatever it runs in turn."""
        if len(self.programs) >= MAX_COMMAND_PROGRAMS or depth > MAX_COMMAND_DEPTH:
            self.flags.add("unparsed")
            return
        if depth > self.depth:
            self.depth = depth
        first, args = words[0], words[1:]
        name, dynamic = program_name(first, placeholder)
        if dynamic:
            self.flags.add("dynamic")
        if appended or any(
            word.dynamic or (placeholder is not None and placeholder in word.text) for word in args
        ):
            self.flags.add("dynamic_args")
        self.listed(name, tuple(word.text for word in args), via)
        if dynamic:
            return
        inner_via = (*via, name)
        for step in unwrap(name, args):
            if isinstance(step, Run):
                where = scope
                if step.cwd is not None:  # env -C DIR, sudo -D DIR: for the scripts it runs
                    where = scope.copy()
                    self.change_directory(where, step.cwd)
                self.run(step.words, inner_via, where, depth + 1, stdin, step.placeholder,
                         step.appended)  # fmt: skip
            elif isinstance(step, Script):
                self.nested(step.text, step.cwd, scope, depth, inner_via, step.appended)
            elif isinstance(step, Unknown):
                self.flags.add("dynamic")  # bash <(curl ...)
            elif isinstance(step, Stdin):
                if stdin == "pipe":
                    self.flags.add("dynamic")  # curl ... | sh
                elif isinstance(stdin, Word):
                    self.nested(stdin, None, scope, depth, inner_via, False)

    def nested(
        self,
        text: Word,
        cwd: Word | None,
        scope: _Scope,
        depth: int,
        via: tuple[str, ...],
        appended: bool,
    ) -> None:
        """Read a script a wrapper runs, in a shell of its own."""
        if text.dynamic or text.pattern:
            self.flags.add("dynamic")
        if appended:
            self.flags.add("dynamic_args")
        inner = scope.copy()
        if cwd is not None:
            self.change_directory(inner, cwd)
        self.script(text.text, inner, depth + 1, via)

    def declaration(self, node: Any, source: bytes, via: tuple[str, ...]) -> None:
        """``export``, ``declare``, ``local``, ``readonly``, ``typeset``, ``unset``: a
        program named by its keyword, with its words as arguments."""
        children = node.children
        if not children or children[0].is_named:
            return
        name = source[children[0].start_byte : children[0].end_byte].decode("utf-8", "replace")
        argv = tuple(argument_text(child, source) for child in children[1:] if child.is_named)
        self.listed(name, argv, via)

    def listed(self, name: str, argv: tuple[str, ...], via: tuple[str, ...]) -> None:
        """List a program, once per command, within :data:`MAX_COMMAND_PROGRAMS`."""
        if len(self.programs) >= MAX_COMMAND_PROGRAMS:
            self.flags.add("unparsed")
        elif (name, argv, via) not in self.seen:
            self.seen.add((name, argv, via))
            self.programs.append(Program(name, argv, via))

    # --- directories and redirections ---------------------------------------------------

    def directory(self, words: list[Word], scope: _Scope) -> tuple[str, bool] | None:
        """The directory ``cd DIR`` (``builtin cd``, ``pushd DIR``) moves this shell to:
        ``(path, known)``, or ``None`` when the command is no directory change."""
        if words[0].text not in _DIRECTORY_WORDS:
            return None
        while words and words[0].literal and words[0].text in ("builtin", "command"):
            words = words[1:]
        if not words or not words[0].literal or words[0].text not in _DIRECTORY_BUILTINS:
            return None
        name, args = words[0].text, words[1:]
        while args and args[0].text in ("-L", "-P", "-e", "-@", "--"):
            args = args[1:]
        if name == "popd" or (name == "pushd" and not args):
            return scope.cwd, False
        target = args[0] if args else Word("~", tilde=True)
        if target.text == "-" or target.text[:1] in ("+", "-"):
            return scope.cwd, False
        probe = _Scope(scope.cwd, scope.known)
        self.change_directory(probe, target)
        return probe.cwd, probe.known

    def change_directory(self, scope: _Scope, target: Word) -> None:
        path, dynamic = self.path(target, scope)
        scope.cwd, scope.known = path, scope.known and not dynamic

    def path(self, word: Word, scope: _Scope) -> tuple[str, bool]:
        """``word`` as an absolute, lexically normalized path, and whether it is not
        known exactly (an expansion, a pattern, ``~user``, a directory not known)."""
        text = word.text
        dynamic = word.dynamic or word.pattern
        if word.tilde:
            head, slash, rest = text.partition("/")
            if head == "~" and self.home:
                text = self.home + slash + rest
            else:
                dynamic = True
        if not text.startswith("/") and not scope.known:
            dynamic = True
        return normalize(text, scope.cwd), dynamic

    def redirect(self, node: Any, source: bytes, scope: _Scope) -> None:
        """A redirection that writes (``>``, ``>>``, ``>|``, ``&>``, ``&>>``, ``<>``,
        ``>&FILE``) names its target as a write."""
        target = node.child_by_field_name("destination")
        operator = next((child.type for child in node.children if not child.is_named), None)
        if target is None or operator is None or target.type == "process_substitution":
            return
        if operator not in _WRITES and not (operator == ">&" and target.type != "number"):
            return
        word = word_value(target, source)
        if not word.text or (operator == ">&" and word.text == "-"):
            return
        path, dynamic = self.path(word, scope)
        if dynamic:
            self.flags.add("dynamic_path")
        elif path in _DEVICES or path.startswith("/dev/fd/"):
            return
        self.writes.setdefault(path)

    def statement_input(self, node: Any, source: bytes, inherited: _Input) -> _Input:
        """The standard input a redirected statement's redirections give its body."""
        stdin = inherited
        for child in node.children_by_field_name("redirect"):
            if child.type == "heredoc_redirect":
                stdin = heredoc_value(child, source)
            elif child.type == "herestring_redirect":
                stdin = herestring_value(child, source)
            elif child.type == "file_redirect" and any(
                not part.is_named and part.type == "<" for part in child.children
            ):
                target = child.child_by_field_name("destination")
                piped = target is not None and target.type == "process_substitution"
                stdin = "pipe" if piped else "file"  # `sh < <(curl ...)` reads a program
        return stdin


def parse_command(
    text: str,
    cwd: str,
    *,
    home: str | None = None,
    max_bytes: int = MAX_COMMAND_BYTES,
    max_nodes: int = MAX_COMMAND_NODES,
    max_seconds: float = MAX_PARSE_SECONDS,
) -> ShellCommand:
    """Read what the Bash command line ``text`` would run and write, run in ``cwd``.

    ``home`` expands a leading ``~`` in a path (``> ~/notes``, ``cd ~``); without it such
    a path is ``dynamic_path``. Never raises on any text; past the limits the command is
    ``unparsed`` (see the module's docstring). ``max_bytes``, ``max_nodes`` and
    ``max_seconds`` lower the limits for this command (a caller sharing one budget among
    several commands); they never raise them above :data:`MAX_COMMAND_BYTES`,
    :data:`MAX_COMMAND_NODES` and :data:`MAX_PARSE_SECONDS`.
    """
    reader = _Reader(
        home,
        min(max_bytes, MAX_COMMAND_BYTES),
        min(max_nodes, MAX_COMMAND_NODES),
        min(max_seconds, MAX_PARSE_SECONDS),
    )
    reader.script(text, _Scope(cwd), 0, ())
    return reader.result()
