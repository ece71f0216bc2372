"""Skills and variables: parsing, sources, the four starter tools through the dispatch
pipeline, a secret that never reaches the store, and the changed-skill notice."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from raw_core.agent import Agent, load_agent
from raw_core.agent.skills import parse_skill
from raw_core.agent.variables import VarService
from raw_core.config import VarDefinition, VarSource, load_config
from raw_core.dispatch import Dispatcher
from raw_core.errors import ConfigInvalid, VarNotSelected, VarUnavailable
from raw_core.plugins import PluginHost
from raw_core.providers.contract import ModelRequest
from raw_core.providers.scripted import Reply, ScriptedProvider
from raw_core.runtime import Runtime
from raw_core.sessions.sqlite import SqliteBackend, TextBlock, ToolResultMessage, UserMessage
from raw_core.tools.calls import ToolCall

pytestmark = pytest.mark.anyio

SECRET = "s3cr3t-value-0b6f1e"
STARTER = ["builtin/list_skills", "builtin/load_skill", "builtin/list_vars", "builtin/read_var"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def write_skill(root: Path, name: str, description: str, body: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n")
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAW_TEST_SECRET", SECRET)
    write_skill(tmp_path / "skills", "review", "How to review a change.", "Read the diff first.")
    write_skill(tmp_path / "skills", "release", "How to cut a release.", "Tag, then publish.")
    write_skill(tmp_path / "skills", "unused", "Not selected.", "Never read.")
    (tmp_path / "token.txt").write_text("file-token\n")
    (tmp_path / "raw.json").write_text(
        json.dumps(
            {
                "vars": {
                    "API_TOKEN": {
                        "description": "The service token",
                        "from": {"env": "RAW_TEST_SECRET"},
                    },
                    "FILE_TOKEN": {
                        "description": "A token kept in a file",
                        "from": {"file": "token.txt"},
                    },
                    "OTHER": {"description": "Not selected", "from": {"env": "HOME"}},
                },
                "skills": {"paths": ["skills"]},
                "agents": {
                    "a": {
                        "tools": {"use": STARTER},
                        "skills": {"use": ["review", "release"]},
                        "vars": {"use": ["API_TOKEN", "FILE_TOKEN"]},
                    }
                },
            }
        )
    )
    return tmp_path


@pytest.fixture
def agent(project: Path, builtin_host: PluginHost) -> Agent:
    return load_agent(load_config(project / "raw.json"), host=builtin_host)


async def call(agent: Agent, name: str, arguments: dict[str, Any]) -> Any:
    dispatcher = Dispatcher(
        agent.registry, agent.policy, vars=agent.vars, skills=agent.skills.for_session()
    )
    return await dispatcher.dispatch(ToolCall(id="c", name=name, arguments=json.dumps(arguments)))


# --- skills ------------------------------------------------------------------------------


async def test_list_skills_lists_the_selected_skills_in_order(agent: Agent) -> None:
    result = await call(agent, "list_skills", {})
    assert result.text() == ("review: How to review a change.\nrelease: How to cut a release.")


async def test_load_skill_loads_a_selected_body(agent: Agent) -> None:
    result = await call(agent, "load_skill", {"name": "release"})
    assert result.status == "ok"
    assert result.text() == "Tag, then publish."


@pytest.mark.parametrize("name", ["unused", "nope"])
async def test_load_skill_refuses_any_other_name(agent: Agent, name: str) -> None:
    result = await call(agent, "load_skill", {"name": name})
    assert result.code == "skill_not_selected"
    assert "review, release" in result.text()


def test_only_selected_skills_are_read(project: Path, builtin_host: PluginHost) -> None:
    (project / "skills" / "unused" / "SKILL.md").write_text("not front matter at all")
    agent = load_agent(load_config(project / "raw.json"), host=builtin_host)
    assert [s.name for s in agent.skills.listing()] == ["review", "release"]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("no front matter", "line 1", id="no-front-matter"),
        pytest.param("---\nname: x\n", "never ends", id="unclosed"),
        pytest.param("---\nname: x\n---\nbody", "'description'", id="no-description"),
        pytest.param("---\ndescription: d\n---\n", "'name'", id="no-name"),
        pytest.param("---\nname: other\ndescription: d\n---\n", "folder name", id="name-folder"),
        pytest.param("---\nnot a pair\n---\n", "line 2", id="bad-line"),
    ],
)
def test_malformed_skill_files_are_refused(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        parse_skill(text, path=tmp_path / "x" / "SKILL.md")


def test_a_missing_selected_skill_is_a_config_error_naming_the_entry(
    project: Path, builtin_host: PluginHost
) -> None:
    data = json.loads((project / "raw.json").read_text())
    data["agents"]["a"]["skills"]["use"] = ["review", "ghost"]
    (project / "raw.json").write_text(json.dumps(data))
    with pytest.raises(ConfigInvalid) as caught:
        load_agent(load_config(project / "raw.json"), host=builtin_host)
    assert caught.value.field == "$.agents.a.skills.use[1]"
    assert "ghost" in caught.value.message


# --- variables --------------------------------------------------------------------------


async def test_list_vars_lists_names_and_descriptions_never_values(agent: Agent) -> None:
    result = await call(agent, "list_vars", {})
    assert result.text() == "API_TOKEN: The service token\nFILE_TOKEN: A token kept in a file"
    assert SECRET not in json.dumps(result.to_dict())


async def test_read_var_answers_with_a_placeholder(agent: Agent) -> None:
    result = await call(agent, "read_var", {"name": "API_TOKEN"})
    assert result.status == "ok"
    assert result.to_dict()["content"] == [{"type": "var", "name": "API_TOKEN"}]
    assert SECRET not in json.dumps(result.to_dict())


@pytest.mark.parametrize(
    ("name", "code"), [("OTHER", "var_not_selected"), ("NOPE", "var_not_selected")]
)
async def test_read_var_refuses_unselected_names(agent: Agent, name: str, code: str) -> None:
    assert (await call(agent, "read_var", {"name": name})).code == code


async def test_an_unreadable_variable_is_var_unavailable(
    agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAW_TEST_SECRET")
    result = await call(agent, "read_var", {"name": "API_TOKEN"})
    assert result.code == "var_unavailable"
    assert "RAW_TEST_SECRET is not set" in result.text()


def service(source: VarSource, tmp_path: Path, environ: dict[str, str] | None = None) -> VarService:
    return VarService(
        {"V": VarDefinition(description="d", source=source)},
        ["V"],
        base_dir=tmp_path,
        environ=environ or {},
    )


def test_sources_env_file_and_command(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("from-file\n")
    assert service(VarSource(env="E"), tmp_path, {"E": "from-env"}).read("V") == "from-env"
    assert service(VarSource(file="f"), tmp_path).read("V") == "from-file"
    command = (sys.executable, "-c", "print('from-command')")
    assert service(VarSource(command=command), tmp_path).read("V") == "from-command"


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        pytest.param(VarSource(env="MISSING"), "not set", id="env-unset"),
        pytest.param(VarSource(file="absent"), "cannot read", id="file-missing"),
        pytest.param(
            VarSource(command=(sys.executable, "-c", "import sys; sys.exit(3)")),
            "exited with status 3",
            id="command-fails",
        ),
        pytest.param(
            VarSource(
                command=(sys.executable, "-c", "import time; time.sleep(30)"), timeout_ms=200
            ),
            "did not finish",
            id="command-timeout",
        ),
        pytest.param(VarSource(command=("/no/such/program",)), "cannot run", id="no-program"),
        pytest.param(VarSource(command=(sys.executable, "-c", "pass")), "empty", id="empty"),
    ],
)
def test_sources_that_fail_say_why(tmp_path: Path, source: VarSource, fragment: str) -> None:
    with pytest.raises(VarUnavailable, match=fragment):
        service(source, tmp_path).read("V")


def test_values_are_read_once_per_runtime(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    code = (
        f"import pathlib; p = pathlib.Path({str(counter)!r});"
        " n = int(p.read_text()) + 1 if p.exists() else 1; p.write_text(str(n)); print(n)"
    )
    variables = service(VarSource(command=(sys.executable, "-c", code)), tmp_path)
    assert variables.read("V") == variables.read("V") == "1"
    assert service(VarSource(command=(sys.executable, "-c", code)), tmp_path).read("V") == "2"


def test_reading_an_unselected_variable_is_refused(tmp_path: Path) -> None:
    with pytest.raises(VarNotSelected):
        service(VarSource(env="E"), tmp_path, {"E": "x"}).read("W")


# --- a secret never reaches the store -----------------------------------------------------


@pytest.fixture
async def backend(project: Path) -> AsyncIterator[SqliteBackend]:
    async with await SqliteBackend.open(project / "state") as opened:
        yield opened


async def test_a_secret_read_in_a_turn_reaches_the_model_and_nothing_else(
    project: Path, agent: Agent, backend: SqliteBackend, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    provider = ScriptedProvider(
        [
            Reply(tool_calls=(("read_var", {"name": "API_TOKEN"}),)),
            Reply(text="got it"),
            Reply(text="still here"),
        ]
    )
    events: list[Any] = []
    runtime = Runtime(backend)
    async with runtime.open_session(agent, provider) as session:
        await session.run_turn("read the token", on_event=events.append)
    async with runtime.open_session(agent, provider, session_id=session.id) as resumed:
        await resumed.run_turn("again")
    for request in provider.requests[1:]:
        results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
        assert results[0].content == (TextBlock(text=SECRET),)
    for path in (project / "state").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in caplog.text
    assert SECRET not in json.dumps([e.to_dict() for e in events])
    page = await backend.page(session.id)
    assert SECRET not in repr(page)


# --- a changed skill ----------------------------------------------------------------------


async def test_a_changed_skill_the_model_read_adds_a_notice_once(
    project: Path, builtin_host: PluginHost, backend: SqliteBackend
) -> None:
    agent = load_agent(load_config(project / "raw.json"), host=builtin_host)
    provider = ScriptedProvider(
        [
            Reply(tool_calls=(("load_skill", {"name": "review"}),)),
            Reply(text="read"),
            Reply(text="ok"),
            Reply(text="ok"),
        ]
    )
    runtime = Runtime(backend)
    async with runtime.open_session(agent, provider) as session:
        await session.run_turn("load the review skill")
    write_skill(project / "skills", "review", "How to review a change.", "Read tests first.")
    changed = load_agent(load_config(project / "raw.json"), host=builtin_host)
    async with runtime.open_session(changed, provider, session_id=session.id) as resumed:
        await resumed.run_turn("review my change")
        await resumed.run_turn("and now?")
    notice_turn = provider.requests[2].messages[-1]
    assert isinstance(notice_turn, UserMessage)
    assert "review changed since you loaded it" in notice_turn.content[0].text  # type: ignore[union-attr]
    assert notice_turn.content[1] == TextBlock(text="review my change")
    assert provider.requests[3].messages[-1] == UserMessage.from_text("and now?")
    assert len({r.cache_key for r in provider.requests}) == 1


async def test_a_changed_skill_never_read_adds_no_notice(
    project: Path, builtin_host: PluginHost, backend: SqliteBackend
) -> None:
    agent = load_agent(load_config(project / "raw.json"), host=builtin_host)
    provider = ScriptedProvider([Reply(text="a"), Reply(text="b")])
    runtime = Runtime(backend)
    async with runtime.open_session(agent, provider) as session:
        await session.run_turn("hi")
    write_skill(project / "skills", "review", "How to review a change.", "Changed.")
    changed = load_agent(load_config(project / "raw.json"), host=builtin_host)
    async with runtime.open_session(changed, provider, session_id=session.id) as resumed:
        await resumed.run_turn("hello")
    assert provider.requests[1].messages[-1] == UserMessage.from_text("hello")


async def test_what_the_model_read_is_recorded_as_soon_as_it_read_it(
    project: Path, builtin_host: PluginHost, backend: SqliteBackend
) -> None:
    """A crash later in the turn must not forget it (else no notice after a change)."""
    agent = load_agent(load_config(project / "raw.json"), host=builtin_host)
    recorded: list[Any] = []
    finished: list[str] = []

    class Recording(ScriptedProvider):
        """Reads the stored state when the request after the call starts: nothing is
        stored between the call's result and that request, and the turn has not ended."""

        async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
            if finished:
                recorded.append((await backend.state(finished.pop())).skills_seen)
            async for event in super().stream(request):
                yield event

    provider = Recording(
        [Reply(tool_calls=(("load_skill", {"name": "review"}),)), Reply(text="read")]
    )
    async with Runtime(backend).open_session(agent, provider) as session:

        def on_event(event: Any) -> None:
            if event.to_dict()["type"] == "tool_call_finished":
                finished.append(session.id)

        await session.run_turn("load it", on_event=on_event)
    assert len(recorded) == 1
    assert list(recorded[0] or {}) == ["review"]
