"""Integration: the providers against aimock, a fake model server someone else wrote, on
loopback. It speaks Chat Completions, the Responses API and Anthropic Messages over real
HTTP with real SSE, so these tests exercise the SDKs, the network path and raw's adapters
together: streamed tool calls, a 429 followed by success, a whole turn of the agent loop
with a real tool, and ``raw models check``.

The suite provisions aimock itself: the npm package ``@copilotkit/aimock`` (pinned below) is
installed once with ``npm install --no-save --no-package-lock`` into the user's cache
folder (``~/.cache/raw/aimock/<version>``; set ``AIMOCK_CLI_PATH`` to another build's
``dist/cli.js`` to use that instead), and :class:`Aimock` below runs its CLI on a free
loopback port and talks to its control API (``/__aimock/...``). Node.js 20 or newer is a
prerequisite.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import platformdirs
import pytest
from click.testing import CliRunner

from raw_core.agent import load_agent
from raw_core.cli.models import models
from raw_core.config import ModelConfig, SecretRef, load_config
from raw_core.errors import RateLimited
from raw_core.plugins import PluginHost
from raw_core.providers.contract import (
    ModelRequest,
    ModelTool,
    Provider,
    ProviderEvent,
    StopEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from raw_core.runtime import Runtime
from raw_core.runtime.events import LoopEvent, ToolCallFinished
from raw_core.runtime.models import make_provider
from raw_core.sessions.sqlite import AssistantMessage, SqliteBackend, ToolResultMessage, UserMessage
from raw_providers import plugin
from raw_providers._names import wire_alias
from tests.conftest import Children, missing_prerequisite, raw_script

pytestmark = pytest.mark.anyio

AIMOCK_VERSION = "1.43.0"
MIN_NODE = 20
KEY = "sk-aimock-SECRET-123456"
ENV = {"AIMOCK_TEST_KEY": KEY}
SLASHED = "weather/current"
ARGUMENTS = {"city": "Paris", "units": "celsius", "details": True}

APIS = [
    pytest.param(("openai", "chat"), id="chat-completions"),
    pytest.param(("openai", "responses"), id="responses"),
    pytest.param(("anthropic", None), id="anthropic-messages"),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# --- provisioning aimock -------------------------------------------------------------------


def _node_major(node: str) -> int:
    found = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    match = re.match(r"v(\d+)\.", found.stdout.strip())
    return int(match.group(1)) if match else 0


@pytest.fixture(scope="session")
def aimock_cli() -> Path:
    """aimock's ``cli.js``: ``AIMOCK_CLI_PATH``, else installed once into the cache."""
    explicit = os.environ.get("AIMOCK_CLI_PATH")
    if explicit:
        if shutil.which("node") is None:
            missing_prerequisite("the aimock integration tests need Node.js on PATH")
        return Path(explicit)
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None or _node_major(node) < MIN_NODE:
        missing_prerequisite(
            f"the aimock integration tests need Node.js {MIN_NODE} or newer and npm on PATH"
        )
    root = Path(platformdirs.user_cache_dir("raw")) / "aimock"
    target = root / AIMOCK_VERSION
    cli = target / "node_modules" / "@copilotkit" / "aimock" / "dist" / "cli.js"
    if cli.is_file():
        return cli
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if cli.is_file():  # another run installed it while this one waited
            return cli
        staging = Path(tempfile.mkdtemp(prefix="install-", dir=root))
        # A package.json of its own keeps npm from looking for one in a parent folder.
        (staging / "package.json").write_text('{"name": "raw-aimock-cache", "private": true}\n')
        subprocess.run(
            [
                npm,
                "install",
                "--no-save",
                "--no-package-lock",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                f"@copilotkit/aimock@{AIMOCK_VERSION}",
            ],
            cwd=staging,
            check=True,
            timeout=300,
            stdout=subprocess.DEVNULL,
        )
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    return cli


class Aimock:
    """An aimock process on a loopback port, and its control API."""

    def __init__(self, cli: Path, folder: Path) -> None:
        fixtures = folder / "fixtures"
        fixtures.mkdir()
        (fixtures / "empty.json").write_text('{"fixtures": []}')
        self.log = folder / "aimock.log"
        with open(self.log, "w") as log:
            node = shutil.which("node") or "node"
            self.process = subprocess.Popen(
                [node, str(cli), "--host", "127.0.0.1", "--port", "0", "--fixtures", str(fixtures)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.base_url = self._wait_for_address()
        self.control = httpx2.Client(base_url=f"{self.base_url}/__aimock", timeout=10)

    def _wait_for_address(self, seconds: float = 120) -> str:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            found = re.search(r"listening on (http://[0-9.:]+)", self.log.read_text())
            if found:
                return found.group(1)
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"aimock did not start: {self.log.read_text()[-2000:]}")

    def add_fixture(self, match: dict[str, Any], response: dict[str, Any]) -> None:
        answer = self.control.post(
            "/fixtures", json={"fixtures": [{"match": match, "response": response}]}
        )
        answer.raise_for_status()

    def next_error(self, status: int, error: dict[str, Any]) -> None:
        """The next request (whatever it is) fails once with ``status``."""
        self.control.post("/error", json={"status": status, "body": error}).raise_for_status()

    def journal(self) -> list[dict[str, Any]]:
        answer = self.control.get("/journal")
        answer.raise_for_status()
        entries: list[dict[str, Any]] = answer.json()
        return entries

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if hasattr(self, "control"):
            self.control.close()


@pytest.fixture(scope="module")
def aimock(aimock_cli: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Aimock]:
    """One aimock server for this module, with no fixtures loaded at start."""
    server = Aimock(aimock_cli, tmp_path_factory.mktemp("aimock"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def host() -> PluginHost:
    host = PluginHost()
    host.register(plugin, name="providers")
    return host


def model_for(server: Aimock, provider: str, api: str | None) -> ModelConfig:
    base = f"{server.base_url}/v1" if provider == "openai" else server.base_url
    return ModelConfig(
        provider=provider,
        model="mock-model",
        base_url=base,
        api=api,  # type: ignore[arg-type]
        api_key=SecretRef(env="AIMOCK_TEST_KEY"),
        max_tokens=256,
    )


def make(host: PluginHost, server: Aimock, api: tuple[str, str | None], **options: Any) -> Provider:
    return make_provider(host, model_for(server, *api), environ=ENV, **options)


async def collect(source: Provider, request: ModelRequest) -> list[ProviderEvent]:
    try:
        return [event async for event in source.stream(request)]
    finally:
        close = getattr(source, "aclose", None)
        if close is not None:
            await close()


def tool(name: str) -> ModelTool:
    return ModelTool(
        name=name,
        description="Current weather for a city.",
        input_schema={
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "units": {"type": "string"},
                "details": {"type": "boolean"},
            },
            "required": ["city"],
        },
    )


# --- streamed tool calls through each API ------------------------------------------------


@pytest.mark.parametrize("api", APIS)
async def test_streamed_tool_call_with_an_aliased_name(
    aimock: Aimock, host: PluginHost, api: tuple[str, str | None]
) -> None:
    prompt = f"tool call through {api}"
    aimock.add_fixture(
        {"userMessage": prompt},
        {
            "content": "Let me check the weather.",
            "toolCalls": [{"name": wire_alias(SLASHED), "arguments": ARGUMENTS}],
        },
    )
    request = ModelRequest(
        system="You answer weather questions.",
        tools=(tool(SLASHED),),
        messages=(UserMessage.from_text(prompt),),
        cache_key="k1",
    )
    events = await collect(make(host, aimock, api), request)

    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "Let me check the weather."
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert len(starts) == 1
    assert starts[0].name == SLASHED  # the alias came back as the model-facing name
    assert starts[0].id
    fragments = [e.arguments for e in events if isinstance(e, ToolCallDelta)]
    assert len(fragments) > 1  # arguments arrived in pieces
    assert json.loads("".join(fragments)) == ARGUMENTS
    assert ToolCallEnd(index=0) in events
    assert events[-1] == StopEvent(reason="tool_use")

    sent = aimock.journal()[-1]
    assert wire_alias(SLASHED) in json.dumps(sent)
    assert f'"{SLASHED}"' not in json.dumps(sent)


@pytest.mark.parametrize(
    "api",
    [
        pytest.param(("openai", "chat"), id="openai"),
        pytest.param(("anthropic", None), id="anthropic"),
    ],
)
async def test_a_429_followed_by_success(
    aimock: Aimock, host: PluginHost, api: tuple[str, str | None]
) -> None:
    prompt = f"rate limited once {api}"
    aimock.add_fixture({"userMessage": prompt}, {"content": "Fine now."})
    aimock.next_error(429, {"message": "Rate limited", "type": "rate_limit_error"})
    request = ModelRequest(
        system=None, tools=(), messages=(UserMessage.from_text(prompt),), cache_key="k"
    )
    events = await collect(make(host, aimock, api), request)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Fine now."
    assert events[-1] == StopEvent(reason="end_turn")


async def test_a_429_without_retries_is_rate_limited_with_retry_after(
    aimock: Aimock, host: PluginHost
) -> None:
    aimock.next_error(429, {"message": "Rate limited", "type": "rate_limit_error"})
    request = ModelRequest(
        system=None, tools=(), messages=(UserMessage.from_text("anything"),), cache_key="k"
    )
    with pytest.raises(RateLimited) as caught:
        await collect(make(host, aimock, ("openai", "chat"), max_retries=0), request)
    assert caught.value.context["status"] == 429
    assert caught.value.context["retry_after"] == 1.0
    assert KEY not in str(caught.value.to_dict())


# --- a whole turn of the agent loop --------------------------------------------------------

WEATHER_TOOL = {
    "api_version": 2,
    "id": "get_weather",
    "version": "1.0.0",
    "name": "get_weather",
    "description": "Current weather for a city.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "entry": "./tool.py",
}
WEATHER_CODE = (
    "def handler(args, context):\n"
    "    return {'content': [{'type': 'text', 'text': args['city'] + ': 21 C and sunny'}]}\n"
)


@pytest.mark.parametrize("api", APIS)
async def test_a_turn_of_the_agent_loop_with_a_real_tool(
    aimock: Aimock, host: PluginHost, tmp_path: Path, api: tuple[str, str | None]
) -> None:
    prompt = f"Weather in Paris please ({api})"
    aimock.add_fixture(
        {"userMessage": prompt, "hasToolResult": False},
        {"toolCalls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
    )
    aimock.add_fixture(
        {"userMessage": prompt, "hasToolResult": True},
        {"content": "It is 21 C and sunny in Paris."},
    )
    folder = tmp_path / "tools" / "get_weather"
    folder.mkdir(parents=True)
    (folder / "tool.json").write_text(json.dumps(WEATHER_TOOL))
    (folder / "tool.py").write_text(WEATHER_CODE)
    (tmp_path / "raw.json").write_text(
        json.dumps(
            {"agents": {"main": {"system": "Use tools.", "tools": {"use": ["agent/get_weather"]}}}}
        )
    )
    agent = load_agent(load_config(tmp_path / "raw.json"), host=host)
    source = make(host, aimock, api)
    seen: list[LoopEvent] = []
    async with (
        await SqliteBackend.open(tmp_path / "state") as backend,
        Runtime(backend, host=host).open_session(agent, source, cwd=tmp_path) as session,
    ):
        ended = await session.run_turn(prompt, on_event=seen.append)
    close = getattr(source, "aclose", None)
    if close is not None:
        await close()

    assert ended.reason == "completed", ended.error
    assert ended.steps == 2
    finished = [e for e in seen if isinstance(e, ToolCallFinished)]
    assert len(finished) == 1
    assert finished[0].name == "get_weather"
    assert finished[0].status == "ok"
    assert "Paris: 21 C and sunny" in json.dumps(finished[0].to_dict()["content"])
    journal = aimock.journal()
    second = json.dumps(journal[-1])
    assert "Paris: 21 C and sunny" in second  # the tool result reached the model
    assert KEY not in json.dumps(ended.to_dict())


async def test_the_transcript_of_a_turn_keeps_calls_and_results(
    aimock: Aimock, host: PluginHost, tmp_path: Path
) -> None:
    prompt = "Weather for the transcript"
    aimock.add_fixture(
        {"userMessage": prompt, "hasToolResult": False},
        {"toolCalls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    )
    aimock.add_fixture({"userMessage": prompt, "hasToolResult": True}, {"content": "Sunny."})
    folder = tmp_path / "tools" / "get_weather"
    folder.mkdir(parents=True)
    (folder / "tool.json").write_text(json.dumps(WEATHER_TOOL))
    (folder / "tool.py").write_text(WEATHER_CODE)
    (tmp_path / "raw.json").write_text(
        json.dumps({"agents": {"main": {"tools": {"use": ["agent/get_weather"]}}}})
    )
    agent = load_agent(load_config(tmp_path / "raw.json"), host=host)
    source = make(host, aimock, ("openai", "responses"))
    async with await SqliteBackend.open(tmp_path / "state") as backend:
        async with Runtime(backend, host=host).open_session(agent, source, cwd=tmp_path) as session:
            ended = await session.run_turn(prompt)
            session_id = session.id
        async with backend.open_writer(session_id) as writer:
            context = await writer.read_context()
    assert ended.reason == "completed", ended.error
    kinds = [type(m) for m in context]
    assert kinds == [UserMessage, AssistantMessage, ToolResultMessage, AssistantMessage]
    call = context[1].tool_calls[0]  # type: ignore[union-attr]
    assert call.name == "get_weather"
    assert json.loads(call.arguments) == {"city": "Oslo"}
    assert context[3].text == "Sunny."  # type: ignore[union-attr]


# --- raw models check ------------------------------------------------------------------------


def write_models_config(tmp_path: Path, server: Aimock) -> Path:
    path = tmp_path / "raw.json"
    path.write_text(
        json.dumps(
            {
                "agents": {"main": {"tools": {"use": []}}},
                "models": {
                    "mock": {
                        "provider": "openai",
                        "model": "mock-model",
                        "base_url": f"{server.base_url}/v1",
                        "api_key": {"env": "AIMOCK_TEST_KEY"},
                    },
                    "claude": {
                        "provider": "anthropic",
                        "model": "mock-claude",
                        "base_url": server.base_url,
                        "api_key": {"env": "AIMOCK_TEST_KEY"},
                    },
                },
            }
        )
    )
    return path


@pytest.mark.parametrize("name", ["mock", "claude"])
def test_models_check_reports_what_works(aimock: Aimock, tmp_path: Path, name: str) -> None:
    aimock.add_fixture({"userMessage": "Reply with the single word ok."}, {"content": "ok"})
    path = write_models_config(tmp_path, aimock)
    result = CliRunner().invoke(models, ["check", name, "--config", str(path)], env=ENV)
    assert result.exit_code == 0, result.output
    assert "credential  env:AIMOCK_TEST_KEY: set" in result.output
    assert "streamed text: 'ok'" in result.output
    assert "stop reason: end_turn" in result.output
    assert KEY not in result.output


def test_models_check_json_and_a_refused_credential(aimock: Aimock, tmp_path: Path) -> None:
    path = write_models_config(tmp_path, aimock)
    aimock.next_error(
        401, {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error"}
    )
    result = CliRunner().invoke(models, ["check", "mock", "--config", str(path), "--json"], env=ENV)
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    assert report["ok"] is False
    assert report["error"]["code"] == "auth_failed"
    assert report["error"]["status"] == 401
    assert KEY not in result.output


# --- the reference CLI: a full turn against aimock ------------------------------------------


def test_raw_run_completes_a_turn_against_aimock_on_a_terminal(
    aimock: Aimock, tmp_path: Path, children: Children
) -> None:
    """``raw run`` in a real pseudo-terminal: the model (aimock, over the OpenAI-compatible
    API) asks for builtin/bash, an ask rule stops it, the user answers yes, the command
    runs, and the model's final answer streams."""
    import pexpect

    prompt = "List the files, please (cli turn)"
    aimock.add_fixture(
        {"userMessage": prompt, "hasToolResult": False},
        {"toolCalls": [{"name": "bash", "arguments": {"commands": [{"command": "ls"}]}}]},
    )
    aimock.add_fixture(
        {"userMessage": prompt, "hasToolResult": True}, {"content": "There is one file."}
    )
    (tmp_path / "only-file.txt").write_text("x")
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps(
            {
                "models": {
                    "local": {
                        "provider": "openai-compatible",
                        "model": "mock-model",
                        "base_url": f"{aimock.base_url}/v1",
                    }
                },
                "agents": {
                    "main": {
                        "model": "local",
                        "tools": {
                            "use": ["builtin/bash"],
                            "rules": [{"match": "builtin/bash", "effect": "ask"}],
                        },
                    }
                },
            }
        )
    )
    raw = raw_script()
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"), TERM="dumb")
    child = children.spawn(
        raw,
        ["run", prompt, "--config", str(config), "--cwd", str(tmp_path)],
        env=env,
        encoding="utf-8",
        timeout=120,  # each wait ends as soon as its text shows; this bounds a hang only
        dimensions=(40, 200),
    )
    child.expect(r"Run it\? \[y/N\]: ")
    child.sendline("y")
    child.expect("only-file.txt")
    child.expect("There is one file.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
