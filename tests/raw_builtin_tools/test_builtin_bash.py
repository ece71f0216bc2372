"""builtin/bash through the real dispatcher, with real processes: exit codes, time limits,
cancellation, killed process groups and bounded output."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from signal import SIGKILL
from typing import Any

import anyio
import pytest

from raw_core.agent import load_agent
from raw_core.config import load_config
from raw_core.dispatch import Dispatcher
from raw_core.frozen import freeze
from raw_core.plugins import PluginHost
from raw_core.tools.calls import CancellationSignal, ToolCall, ToolContext
from raw_core.tools.results import BatchResult, ToolResult


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# A call that was not stopped would wait for its ``sleep 300``: ending within this bound
# shows that it was, on however loaded a machine, without timing the call.
ENDS_WITHIN = 60


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    """The commands' working directory. The pids its ``pid`` and ``pids`` files name are
    killed when the test ends, so a failed test leaves no ``sleep 300`` behind."""
    folder = tmp_path / "work"
    folder.mkdir()
    yield folder
    for name in ("pid", "pids"):
        if (folder / name).exists():
            for pid in pids_in(folder / name):
                if alive(pid):
                    os.kill(pid, SIGKILL)


@pytest.fixture
def dispatcher(tmp_path: Path, work: Path) -> Dispatcher:
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps({"agents": {"test": {"tools": {"use": ["builtin/bash"]}}}}), encoding="utf-8"
    )
    host = PluginHost()
    host.load_entry_points()
    agent = load_agent(load_config(config), host=host)
    return Dispatcher(agent.registry, agent.policy, cwd=work)


async def run(
    dispatcher: Dispatcher,
    *commands: dict[str, Any] | str,
    signal: CancellationSignal | None = None,
) -> ToolResult:
    entries = [{"command": c} if isinstance(c, str) else c for c in commands]
    return await dispatcher.dispatch(
        ToolCall(id="call-1", name="bash", arguments=json.dumps({"commands": entries})),
        signal=signal,
    )


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a parent that never reaps counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc (macOS)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def all_gone(pids: list[int], within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(alive(pid) for pid in pids):
            return True
        time.sleep(0.02)
    return False


def names(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


def wait_for_content(path: Path, within: float = 60.0) -> None:
    deadline = time.monotonic() + within
    while not path.exists() or not path.read_text(encoding="utf-8").strip():
        assert time.monotonic() < deadline, f"{path} never got content"
        time.sleep(0.02)


def pids_in(path: Path) -> list[int]:
    return [int(line) for line in path.read_text(encoding="utf-8").split()]


@pytest.mark.anyio
async def test_each_command_reports_its_exit_code_and_output(
    dispatcher: Dispatcher, work: Path
) -> None:
    result = await run(
        dispatcher,
        "echo out; echo err >&2; exit 3",
        "pwd",
        'cat; read line; echo "read:[$line]"',
        "true",
        "kill -TERM $$",
    )
    text = result.text()
    assert result.status == "ok"
    assert "[1/5] ok: echo out; echo err >&2; exit 3\nexit code 3 (" in text
    assert "--- stdout ---\nout\n--- stderr ---\nerr\n" in text
    assert "[2/5] ok: pwd\nexit code 0" in text
    assert f"--- stdout ---\n{work}\n" in text
    assert "--- stdout ---\nread:[]\n" in text  # stdin is /dev/null: nothing waits
    assert "[4/5] ok: true\nexit code 0 (" in text
    assert "s), no output" in text
    assert "[5/5] ok: kill -TERM $$\nterminated by SIGTERM" in text


@pytest.mark.anyio
async def test_a_timeout_kills_the_whole_group_and_skips_the_rest(
    dispatcher: Dispatcher, work: Path
) -> None:
    commands: list[dict[str, Any] | str] = ["echo one", "echo two"]
    commands.append(
        {
            "command": (
                "sleep 300 & echo $! > pids; sleep 300 & echo $! >> pids; echo started; wait"
            ),
            "timeout_ms": 500,
        }
    )
    commands += [f"touch ran_{i}" for i in range(4, 17)]
    with anyio.fail_after(ENDS_WITHIN):
        result = await run(dispatcher, *commands)
    text = result.text()
    assert "[1/16] ok: echo one" in text
    assert "[2/16] ok: echo two" in text
    assert "[3/16] error (timeout): sleep 300 &" in text
    assert "timed out after 0.5 s; its process group was killed\nkilled (" in text
    assert "--- stdout ---\nstarted\n" in text
    for index in range(4, 17):
        assert f"[{index}/16] skipped: touch ran_{index}\nnot run: command 3 timed out" in text
    assert not [name for name in names(work) if name.startswith("ran_")]
    pids = pids_in(work / "pids")
    assert len(pids) == 2
    assert all_gone(pids)


@pytest.mark.anyio
async def test_cancellation_kills_the_running_command_at_once(
    dispatcher: Dispatcher, work: Path
) -> None:
    signal = CancellationSignal()
    outcome: list[ToolResult] = []
    returned = anyio.Event()

    async def call() -> None:
        outcome.append(
            await run(
                dispatcher,
                "sleep 300 & echo $! > pids; sleep 300",
                "touch never",
                signal=signal,
            )
        )
        returned.set()

    async with anyio.create_task_group() as group:
        group.start_soon(call)
        await anyio.to_thread.run_sync(wait_for_content, work / "pids")
        signal.cancel("user pressed stop")
        with anyio.fail_after(ENDS_WITHIN):
            await returned.wait()
    (result,) = outcome
    assert result.code == "cancelled"
    assert all_gone(pids_in(work / "pids"))
    assert not (work / "never").exists()


@pytest.mark.anyio
async def test_background_processes_end_with_their_command(
    dispatcher: Dispatcher, work: Path
) -> None:
    with anyio.fail_after(ENDS_WITHIN):
        result = await run(dispatcher, "sleep 300 & echo $! > pids; echo done")
    assert "--- stdout ---\ndone\n" in result.text()
    assert all_gone(pids_in(work / "pids"))


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
@pytest.mark.anyio
async def test_job_control_groups_end_with_their_command_too(
    dispatcher: Dispatcher, work: Path
) -> None:
    """With ``set -m`` bash gives each background job its own process group; the jobs stay
    in the command's session, and that is where they are found and killed."""
    result = await run(
        dispatcher,
        "set -m; sleep 300 & echo $! > pids; sleep 300 & echo $! >> pids; echo done",
        {"command": "set -m; sleep 300 & echo $! >> pids; sleep 30", "timeout_ms": 300},
    )
    assert "--- stdout ---\ndone\n" in result.text()
    assert "[2/2] error (timeout)" in result.text()
    pids = pids_in(work / "pids")
    assert len(pids) == 3
    assert all_gone(pids)


@pytest.mark.anyio
async def test_output_beyond_one_mib_is_dropped_and_counted(dispatcher: Dispatcher) -> None:
    result = await run(dispatcher, "head -c 3000000 /dev/zero | tr '\\0' x; echo tail >&2")
    full = result.full_text()
    assert (
        "[stdout: 1951424 more bytes were dropped; only the first 1048576 bytes are kept]" in full
    )
    assert full.split("--- stdout ---\n")[1].split("\n")[0] == "x" * 1048576
    assert "--- stderr ---\ntail\n" in full
    assert result.truncated
    assert len(result.text().encode()) < 8192 + 200


@pytest.mark.anyio
@pytest.mark.parametrize(
    "arguments",
    [
        {"command": "touch ran"},
        {"commands": [{"command": f"touch ran_{i}"} for i in range(17)]},
        {"commands": [{"command": "touch ran"}, {"command": "   "}]},
        {"commands": [{"command": "touch ran"}, {"command": "x", "timeout_ms": 600001}]},
        {"commands": [{"command": "touch ran", "shell": "zsh"}]},
        {"commands": []},
        {"commands": [{"command": "touch ran"}, {"command": "echo \ud800"}]},
    ],
    ids=[
        "old-single-shape",
        "17-commands",
        "blank-command",
        "timeout-too-long",
        "unknown-field",
        "no-commands",
        "lone-surrogate",
    ],
)
async def test_an_invalid_batch_runs_nothing(
    dispatcher: Dispatcher, work: Path, arguments: dict[str, Any]
) -> None:
    result = await dispatcher.dispatch(
        ToolCall(id="call-1", name="bash", arguments=json.dumps(arguments))
    )
    assert result.code == "invalid_arguments", result.text()
    assert names(work) == []


@pytest.mark.anyio
async def test_called_directly_a_fired_signal_reports_cancelled_and_skips(
    dispatcher: Dispatcher, work: Path
) -> None:
    tool = dispatcher.registry.by_name("bash")
    signal = CancellationSignal()
    context = ToolContext(
        cwd=str(work),
        tool_call_id="direct",
        identity=tool.identity,
        max_output_bytes=8192,
        signal=signal,
    )
    arguments = freeze(
        {"commands": [{"command": "echo $$ > pid; exec sleep 300"}, {"command": "touch never"}]}
    )
    outcome: list[BatchResult] = []

    async def call() -> None:
        outcome.append(await tool.handler(arguments, context))

    with anyio.fail_after(2 * ENDS_WITHIN):  # the wait for the pid file, then the call
        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await anyio.to_thread.run_sync(wait_for_content, work / "pid")
            signal.cancel()
    (batch,) = outcome
    text, _, _ = batch.render(8192)
    assert "[1/2] error (cancelled): echo $$ > pid; exec sleep 300\ncancelled; its process" in text
    assert "[2/2] skipped: touch never\nnot run: the call was cancelled during command 1" in text
    assert all_gone(pids_in(work / "pid"))
    assert not (work / "never").exists()


@pytest.mark.anyio
async def test_a_batch_past_the_handler_limit_keeps_its_finished_rows(
    tmp_path: Path, work: Path
) -> None:
    """The agent's ``handler_timeout_ms`` stops the call mid-batch: the row that finished
    reports its result, the running command is killed and reported as timed out, and the
    rest are skipped, so the model can tell what already ran."""
    config = tmp_path / "limited.json"
    config.write_text(
        json.dumps(
            {"agents": {"test": {"tools": {"use": ["builtin/bash"]}, "handler_timeout_ms": 3000}}}
        ),
        encoding="utf-8",
    )
    host = PluginHost()
    host.load_entry_points()
    agent = load_agent(load_config(config), host=host)
    dispatcher = agent.dispatcher(host=None, cwd=work)
    result = await run(dispatcher, "touch a", "echo $$ > pid; exec sleep 30", "touch b")
    text = result.text()
    assert result.code == "timeout"
    assert text.startswith("error [timeout]: the call did not finish within 3 s")
    assert "[1/3] ok: touch a\nexit code 0 (" in text
    assert "[2/3] error (timeout): echo $$ > pid; exec sleep 30\n" in text
    assert "[3/3] skipped: touch b\n" in text
    assert (work / "a").exists()
    assert not (work / "b").exists()
    assert all_gone(pids_in(work / "pid"))
    assert result.full_text() == text
