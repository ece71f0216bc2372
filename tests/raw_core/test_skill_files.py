"""SKILL.md files as people write them (nested keys, lists, folded text, a BOM, CRLF), what
``skills.use`` may name, what load_skill returns, and the reload notice as the docs quote
it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from raw_core.agent import load_agent
from raw_core.agent.skills import parse_skill
from raw_core.config import load_config
from raw_core.dispatch import Dispatcher
from raw_core.errors import ConfigInvalid
from raw_core.plugins import PluginHost
from raw_core.providers.scripted import Reply, ScriptedProvider
from raw_core.runtime import Runtime
from raw_core.sessions.sqlite import SqliteBackend, UserMessage
from raw_core.tools.calls import ToolCall
from tests.conftest import run_raw

pytestmark = pytest.mark.anyio

DOCS = Path(__file__).resolve().parents[2] / "docs" / "skills.md"
HEAD = "---\nname: review\ndescription: d\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def parsed(text: str, tmp_path: Path) -> tuple[str, str]:
    skill = parse_skill(text, path=tmp_path / "review" / "SKILL.md")
    return skill.description, skill.body


@pytest.mark.parametrize(
    ("text", "description", "body"),
    [
        pytest.param(
            HEAD + "metadata:\n  version: 1\n  owner:\n    team: x\n---\nBody\n",
            "d",
            "Body",
            id="nested-key",
        ),
        pytest.param(
            HEAD + "allowed-tools:\n  - Bash\n  - Read\n---\nBody", "d", "Body", id="list"
        ),
        pytest.param(
            HEAD + "allowed-tools:\n- Bash\n- Read\nlicense: MIT\n---\nBody",
            "d",
            "Body",
            id="list-unindented",
        ),
        pytest.param(
            "---\nname: review\ndescription: >\n  How to review\n  a change.\n\n  Twice.\n---\nB",
            "How to review a change.\nTwice.",
            "B",
            id="folded-description",
        ),
        pytest.param(
            "---\nname: review\ndescription: |-\n  Line one\n  Line two\n---\nB",
            "Line one\nLine two",
            "B",
            id="literal-description",
        ),
        pytest.param(
            "---\nname: review\ndescription: How to review\n  a change.\n---\nB",
            "How to review a change.",
            "B",
            id="continued-description",
        ),
        pytest.param(
            "\ufeff---\nname: review\ndescription: d\n---\nB", "d", "B", id="byte-order-mark"
        ),
        pytest.param(
            "---\r\nname: review\r\ndescription: d\r\n---\r\nOne\r\nTwo\r\n",
            "d",
            "One\nTwo",
            id="crlf",
        ),
    ],
)
def test_common_front_matter_is_read(
    tmp_path: Path, text: str, description: str, body: str
) -> None:
    assert parsed(text, tmp_path) == (description, body)


def test_a_description_that_is_a_list_is_refused_saying_so(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="line 3: expected 'description' to be text"):
        parsed("---\nname: review\ndescription:\n  - a\n---\nB", tmp_path)


# --- what skills.use may name -------------------------------------------------------------


def project(tmp_path: Path, use: list[str]) -> Path:
    """A config whose skills live in skills/, and a valid skill outside them."""
    for folder in (tmp_path / "skills" / "review", tmp_path / "outside" / "review"):
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(HEAD + "---\nBody.\n")
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps(
            {
                "skills": {"paths": ["skills"]},
                "agents": {"a": {"tools": {"use": ["builtin/load_skill"]}, "skills": {"use": use}}},
            }
        )
    )
    return config


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param("../outside/review", id="relative-path"),
        pytest.param("{tmp}/outside/review", id="absolute-path"),
        pytest.param("review/", id="trailing-slash"),
        pytest.param("Review", id="uppercase"),
        pytest.param("", id="empty"),
    ],
)
def test_a_skills_use_entry_must_be_a_name(
    tmp_path: Path, builtin_host: PluginHost, entry: str
) -> None:
    config = project(tmp_path, ["review", entry.format(tmp=tmp_path)])
    with pytest.raises(ConfigInvalid) as caught:
        load_agent(load_config(config), host=builtin_host)
    assert caught.value.field == "$.agents.a.skills.use[1]"
    assert caught.value.message.startswith("expected a skill name")


def test_validate_refuses_a_skill_outside_the_paths(tmp_path: Path) -> None:
    config = project(tmp_path, ["../outside/review"])
    validated = run_raw(tmp_path, "config", "validate", "--config", str(config))
    assert validated.returncode == 2, validated.stdout
    assert "$.agents.a.skills.use[0]" in validated.stderr


# --- load_skill and the reload notice -----------------------------------------------------


async def test_load_skill_returns_the_body_as_written(
    tmp_path: Path, builtin_host: PluginHost
) -> None:
    config = project(tmp_path, ["review"])
    body = "# Review\n\nRead the diff.\n\n- then the tests"
    (tmp_path / "skills" / "review" / "SKILL.md").write_text(HEAD + f"---\n{body}\n")
    agent = load_agent(load_config(config), host=builtin_host)
    dispatcher = Dispatcher(agent.registry, agent.policy, skills=agent.skills.for_session())
    result = await dispatcher.dispatch(
        ToolCall(id="c", name="load_skill", arguments=json.dumps({"name": "review"}))
    )
    assert result.status == "ok"
    assert result.text() == body


@pytest.fixture
async def backend(tmp_path: Path) -> AsyncIterator[SqliteBackend]:
    async with await SqliteBackend.open(tmp_path / "state") as opened:
        yield opened


async def test_the_docs_quote_the_reload_notice_as_it_is_sent(
    tmp_path: Path, builtin_host: PluginHost, backend: SqliteBackend
) -> None:
    config = project(tmp_path, ["review"])
    provider = ScriptedProvider(
        [Reply(tool_calls=(("load_skill", {"name": "review"}),)), Reply(text="r"), Reply(text="")]
    )
    runtime = Runtime(backend)
    async with runtime.open_session(
        load_agent(load_config(config), host=builtin_host), provider
    ) as s:
        await s.run_turn("load it")
    (tmp_path / "skills" / "review" / "SKILL.md").write_text(HEAD + "---\nChanged.\n")
    changed = load_agent(load_config(config), host=builtin_host)
    async with runtime.open_session(changed, provider, session_id=s.id) as resumed:
        await resumed.run_turn("go on")
    message = provider.requests[2].messages[-1]
    assert isinstance(message, UserMessage)
    notice: Any = message.content[0]
    assert notice.text.startswith("[raw] ")
    assert notice.text in " ".join(DOCS.read_text().split())
