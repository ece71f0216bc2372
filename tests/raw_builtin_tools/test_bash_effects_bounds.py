"""builtin/bash's effects are bounded by construction: whatever the text, reading it never
raises, stays within the documented limits (bytes parsed, syntax nodes walked, depth,
programs listed; past them the command is ``unparsed``) and gives effects that fit the
tool's effects_schema. How long it takes is measured in benchmarks/, not here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raw_builtin_tools.toolkit import (
    COMMAND_FLAGS,
    MAX_COMMAND_BYTES,
    MAX_COMMAND_DEPTH,
    MAX_COMMAND_NODES,
    MAX_COMMAND_PROGRAMS,
    ShellCommand,
    parse_command,
)
from raw_core.tools.loader import ToolLoader

BASH = Path(__file__).parents[2] / "raw_builtin_tools/src/raw_builtin_tools/tools/bash"
TOKENS = [
    "rm", "sudo", "env", "xargs", "find", "-exec", "{}", "\\;", "+", "bash", "-c", "sh",
    "eval", "echo", "cd", "..", "/", "~", "x", "$x", "${x:-y}", "$(", "`", ")", "(", "{",
    "}", "[[", "]]", "|", "||", "&&", ";", "&", "\n", ">", ">>", "<", "<<", "<<<", "2>&1",
    "&>", "'", '"', "\\", "*", "?", "=", "if", "then", "fi", "for", "in", "do", "done",
    "case", "esac", ";;", "while", "function", "!", "#", "EOF", "<(", ">(", "$((", "))",
    "time", "-p", "coproc", "NAME", "trap", "source", "cat", "/dev/stdin",
    " ", " ", " ", "\t", "é", "\x00", "\ud800",
]  # fmt: skip
TEXTS = st.one_of(
    st.lists(st.sampled_from(TOKENS), max_size=60).map("".join),
    st.lists(st.sampled_from(TOKENS), max_size=60).map(" ".join),
    st.text(max_size=200),
)


def check_bounds(text: str, parsed: ShellCommand) -> None:
    assert parsed.parsed_bytes <= MAX_COMMAND_BYTES
    assert parsed.nodes <= MAX_COMMAND_NODES
    assert parsed.depth <= MAX_COMMAND_DEPTH
    assert len(parsed.programs) <= MAX_COMMAND_PROGRAMS
    assert set(parsed.flags) <= set(COMMAND_FLAGS)
    assert list(parsed.flags) == [flag for flag in COMMAND_FLAGS if flag in parsed.flags]
    if len(text.encode("utf-8", "replace")) > MAX_COMMAND_BYTES:
        assert parsed.flags == ("unparsed",)
        assert parsed.programs == ()
    for path in parsed.writes:
        assert path.startswith("/")
        assert "//" not in path
        assert "/./" not in path + "/"
        assert "/../" not in path + "/"


@pytest.fixture(scope="module")
def bash() -> Any:
    return ToolLoader().load(BASH, identity="builtin/bash")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS, st.sampled_from(["/w", "/", "/a b/c"]))
def test_any_text_reads_within_the_bounds(text: str, cwd: str) -> None:
    # A deadline far away: what is checked is the reading, never how fast this machine is.
    parsed = parse_command(text, cwd, home="/home/me", max_seconds=60.0)
    check_bounds(text, parsed)
    again = parse_command(text, cwd, home="/home/me", max_seconds=60.0)
    assert again == parsed  # lexical: the same each time


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(TEXTS.filter(lambda text: text.strip()), min_size=1, max_size=16),
    st.sampled_from(["/w", "/"]),
)
def test_any_batch_has_effects_that_fit_the_schema(
    bash: Any, commands: list[str], cwd: str
) -> None:
    effects = bash.describe_effects(
        {"commands": [{"command": command} for command in commands]}, SimpleNamespace(cwd=cwd)
    )
    bash.effects_validator.validate(effects)
    assert len(effects["commands"]) == len(commands)
    json.dumps(effects, ensure_ascii=False).encode("utf-8")  # no lone surrogate left


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TOKENS), st.integers(min_value=1, max_value=3))
def test_text_past_the_byte_limit_is_unparsed_without_being_read(token: str, extra: int) -> None:
    size = len(token.encode("utf-8", "replace"))
    text = "echo " + token * (MAX_COMMAND_BYTES // size + extra)
    parsed = parse_command(text, "/w")
    check_bounds(text, parsed)
    assert parsed.flags == ("unparsed",)
    assert parsed.parsed_bytes == 0


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        ("$(" * 200 + "rm x" + ")" * 200, "depth"),
        ("( " * 300 + "rm x" + " )" * 300, "depth"),
        ("bash -c 'bash -c \"eval rm\"'; " + "sudo " * 200 + "rm x", "depth"),
        ("; ".join(f"p{i}" for i in range(MAX_COMMAND_PROGRAMS + 10)), "programs"),
        ("a " * (MAX_COMMAND_NODES + 10), "nodes"),
        ("x;" * (MAX_COMMAND_NODES // 3), "nodes"),
    ],
)
def test_each_limit_marks_the_command_unparsed(text: str, limit: str) -> None:
    assert len(text.encode()) <= MAX_COMMAND_BYTES
    parsed = parse_command(text, "/w")
    check_bounds(text, parsed)
    assert "unparsed" in parsed.flags
    if limit == "programs":
        assert len(parsed.programs) == MAX_COMMAND_PROGRAMS
    elif limit == "nodes":
        assert parsed.nodes == 0
        assert parsed.programs == ()
    else:
        assert parsed.depth == MAX_COMMAND_DEPTH


def test_the_commands_of_one_call_share_one_budget(bash: Any) -> None:
    """docs/tools/bash.md: one call parses at most twice a command's limit, in all."""
    big = "cat > f <<'EOF'\n" + "x" * (MAX_COMMAND_BYTES - 100) + "\nEOF"
    effects = bash.describe_effects(
        {"commands": [{"command": big}] * 4 + [{"command": "ls"}]}, SimpleNamespace(cwd="/w")
    )
    flags = [entry["flags"] for entry in effects["commands"]]
    read = 2 * MAX_COMMAND_BYTES // len(big.encode())
    assert read == 2
    assert flags == [[], [], ["unparsed"], ["unparsed"], []]  # ls still fits in what is left


CRASHER = """
import sys
from raw_builtin_tools.toolkit import parse_command

for point in range(0x80, 0x110000, 0x101):
    if not 0xD800 <= point <= 0xDFFF:
        parse_command("{" + chr(point) + "k:", "/w")
parsed = parse_command("echo {\\U000376a8 é > \\u3000.txt", "/w")
print(parsed.programs[0].line, parsed.writes[0])
"""


def test_characters_past_ascii_never_reach_the_grammar_s_scanner() -> None:
    """Fed to tree-sitter-bash's scanner, ``{`` then U+376A8 crashed the process in about
    half of the runs (the address of a C table decides); each run below would crash."""
    for _ in range(8):
        run = subprocess.run([sys.executable, "-c", CRASHER], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert run.stdout == "echo {\U000376a8 é /w/\u3000.txt\n"


def test_a_parse_past_its_deadline_is_stopped_and_the_command_unparsed() -> None:
    script = "\n".join(f"rm -f build/{index}.o && echo {index} >> log" for index in range(100))
    assert parse_command(script, "/w", max_seconds=60.0).flags == ()
    stopped = parse_command(script, "/w", max_seconds=0.0)
    assert stopped.flags == ("unparsed",)
    assert stopped.programs == ()
    assert stopped.nodes == 0


def test_a_parse_stopped_at_its_deadline_leaves_nothing_for_the_next_command() -> None:
    """tree-sitter resumes a stopped parse at the next call on the same parser, with the
    new text read from the old offsets: the command after one stopped at its deadline was
    misread (``rm -rf build`` as a program ``'rm -rf build'``, or its words cut)."""
    script = "\n".join(f"rm -f build/{index}.o && echo {index} >> log" for index in range(100))
    for _ in range(3):
        assert parse_command(script, "/w", max_seconds=0.0).flags == ("unparsed",)
        after = parse_command("rm -rf build", "/w")
        assert [program.line for program in after.programs] == ["rm -rf build"]
        assert after.flags == ()


def test_reserved_words_nested_past_the_reparse_limit_are_unparsed() -> None:
    """Each ``time { ... }`` inside a blanked one shows only at the next parse; past
    MAX_PREFIX_ROUNDS parses again the command is ``unparsed``, with what was read."""
    inner = "time { " * 3 + "rm a; " + "}; " * 3
    assert parse_command(inner, "/w").flags == ()
    deep = "time { " * 8 + "rm a; " + "}; " * 8
    parsed = parse_command(deep, "/w")
    assert parsed.flags == ("unparsed",)
    check_bounds(deep, parsed)
    many = "time ! true; " * 300  # more words than MAX_PREFIX_CANDIDATES
    assert "unparsed" in parse_command(many, "/w").flags


def test_a_reparse_that_runs_out_of_time_keeps_what_the_first_parse_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The parse again with the reserved words blanked shares the command's time budget.
    When it runs out, what the first parse read is kept (the command is ``unparsed``): a
    rule on the programs still sees ``rm``."""
    from raw_builtin_tools.toolkit.shell_parser import parse_within as real

    calls: list[bytes] = []

    def first_only(data: bytes, seconds: float) -> tuple[Any, float]:
        calls.append(data)
        return real(data, seconds) if len(calls) == 1 else (None, seconds)

    monkeypatch.setattr("raw_builtin_tools.toolkit.shell.parse_within", first_only)
    parsed = parse_command("rm -rf victim\ntime { :; }\n", "/w")
    assert len(calls) == 2  # the first parse, then the one that ran out of time
    assert "unparsed" in parsed.flags
    assert [program.name for program in parsed.programs][:2] == ["rm", "time"]
