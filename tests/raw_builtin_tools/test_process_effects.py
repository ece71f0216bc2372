"""builtin/process's intended effects: bash's shape, one entry per start, and the starter
config's rules ask before a start that would delete, as before such a bash command."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raw_builtin_tools.toolkit import MAX_COMMAND_BYTES
from raw_core import freeze, load_agent, load_config
from raw_core.agent import Agent
from raw_core.cli.config import STARTER_RULES
from raw_core.plugins import PluginHost

CWD = "/w"


@pytest.fixture(scope="module")
def starter(tmp_path_factory: pytest.TempPathFactory) -> Agent:
    config = tmp_path_factory.mktemp("starter") / "raw.json"
    agent = {"tools": {"use": ["builtin/bash", "builtin/process"], "rules": STARTER_RULES}}
    config.write_text(json.dumps({"agents": {"starter": agent}}), encoding="utf-8")
    host = PluginHost()
    host.load_entry_points()
    return load_agent(load_config(config), host=host)


def effects(agent: Agent, name: str, arguments: dict[str, Any]) -> Any:
    tool = agent.registry.by_name(name)
    assert tool.describe_effects is not None
    assert tool.effects_validator is not None
    found = tool.describe_effects(freeze(arguments), SimpleNamespace(cwd=CWD))
    tool.effects_validator.validate(found)
    return found


def verdict(agent: Agent, identity: str, found: Any) -> str:
    return str(agent.policy.decide(identity, {}, found).verdict)


def start(**how: Any) -> dict[str, Any]:
    return {"action": "start", "name": "p", **how}


@pytest.mark.parametrize(
    ("command", "asks"),
    [
        ("rm -rf build", True),
        ("sudo /bin/rm x", True),
        ("find . -name '*.o' -delete", True),
        ("$tool x", True),
        ("npm run dev > dev.log", False),
        ("echo rm", False),
    ],
)
def test_a_start_has_the_effects_of_the_same_bash_command(
    starter: Agent, command: str, asks: bool
) -> None:
    found = effects(starter, "process", {"actions": [{"action": "list"}, start(command=command)]})
    as_bash = effects(starter, "bash", {"commands": [{"command": command}]})
    assert found == as_bash
    assert (verdict(starter, "builtin/process", found) == "ask") is asks
    assert (verdict(starter, "builtin/bash", as_bash) == "ask") is asks


def test_an_argv_is_read_word_by_word_and_a_cwd_moves_the_paths(starter: Agent) -> None:
    found = effects(
        starter,
        "process",
        {
            "actions": [
                start(argv=["sudo", "rm", "-rf", "my dir; echo"]),
                start(command="make > out.txt", cwd="sub/../build", name="q"),
            ]
        },
    )
    first, second = found["commands"]
    assert [p["line"] for p in first["programs"]] == [
        "sudo rm -rf 'my dir; echo'",
        "rm -rf 'my dir; echo'",
    ]
    assert first["flags"] == []
    assert second["programs"][0]["name"] == "make"
    assert found["files"] == [{"path": "/w/build/out.txt", "operation": "write"}]
    assert verdict(starter, "builtin/process", found) == "ask"
    quiet = effects(starter, "process", {"actions": [{"action": "read", "name": "p"}]})
    assert quiet == {"commands": [], "files": []}
    assert verdict(starter, "builtin/process", quiet) == "allow"


PAGE = Path(__file__).parents[2] / "docs" / "tools" / "process.md"
EXAMPLE = re.compile(
    r"<!-- test: effects -->\n```json\n(?P<arguments>.*?)```\n\nin `(?P<cwd>[^`]+)` gives:\n\n"
    r"```json\n(?P<effects>.*?)```",
    re.S,
)


def test_the_page_s_examples_are_valid_and_have_the_effects_shown(starter: Agent) -> None:
    text = PAGE.read_text(encoding="utf-8")
    example = EXAMPLE.search(text)
    assert example is not None
    tool = starter.registry.by_name("process")
    assert tool.describe_effects is not None
    arguments = json.loads(example["arguments"])
    tool.input_validator.validate(arguments)
    found = tool.describe_effects(freeze(arguments), SimpleNamespace(cwd=example["cwd"]))
    assert found == json.loads(example["effects"])
    first = json.loads(text.split("## Input", 1)[1].split("```json\n", 1)[1].split("```", 1)[0])
    tool.input_validator.validate(first)
    assert tool.validate_args is not None
    assert tool.validate_args(first) is None


TOKENS = ["rm", "sudo", "bash", "-c", "$x", "$(", ")", "'", '"', ";", "|", ">", "x", " ", "é"]
WORDS = st.lists(st.sampled_from(TOKENS), max_size=30).map("".join)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            WORDS.filter(str.strip).map(lambda text: {"command": text}),
            st.lists(WORDS, min_size=1, max_size=8)
            .filter(lambda argv: bool(argv[0]))
            .map(lambda argv: {"argv": argv}),
        ),
        min_size=1,
        max_size=16,
    )
)
def test_any_batch_of_starts_has_effects_that_fit_the_schema(
    starter: Agent, starts: list[dict[str, Any]]
) -> None:
    actions = [start(name=f"p{i}", **how) for i, how in enumerate(starts)]
    found = effects(starter, "process", {"actions": actions})
    assert len(found["commands"]) == len(starts)
    json.dumps(found, ensure_ascii=False).encode("utf-8")


def test_the_starts_of_one_call_share_bash_s_budget(starter: Agent) -> None:
    """As for bash: one call parses at most twice a command's limit, in all."""
    big = "cat > f <<'EOF'\n" + "x" * (MAX_COMMAND_BYTES - 100) + "\nEOF"
    actions = [start(name=f"p{i}", command=big) for i in range(4)]
    found = effects(starter, "process", {"actions": [*actions, start(name="q", argv=["ls"])]})
    assert [entry["flags"] for entry in found["commands"]] == [
        [],
        [],
        ["unparsed"],
        ["unparsed"],
        [],
    ]
