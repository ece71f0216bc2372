"""``raw acp`` on what a shell gives it: input piped in and closed at once, regular files
for input and output, and the startup errors (a log file that cannot be opened, an agent
the config lacks, a closed stdin), each one line on stderr, exit 2 and nothing on stdout.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.acp.conftest import Project, raw_run


def _requests(project: Project) -> str:
    lines = [
        {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/new",
            "params": {"cwd": str(project.work), "mcpServers": []},
        },
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


def _answers(output: str) -> dict[Any, dict[str, Any]]:
    """The answers on stdout by id (every line must be a JSON-RPC message)."""
    messages = [json.loads(line) for line in output.splitlines()]
    return {message["id"]: message for message in messages if "id" in message}


def _assert_both_answered(output: str) -> None:
    answers = _answers(output)
    assert set(answers) == {2, 3}, output
    assert answers[2]["result"]["protocolVersion"] == 1
    assert answers[3]["result"]["sessionId"]


def test_requests_piped_with_the_input_closed_at_once_are_answered(project: Project) -> None:
    done = subprocess.run(
        project.acp_argv(),
        env=project.env,
        input=_requests(project),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    _assert_both_answered(done.stdout)
    assert "Traceback" not in done.stderr


def test_input_and_output_can_be_regular_files(project: Project, tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_text(_requests(project))
    answers = tmp_path / "answers.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        done = subprocess.run(
            project.acp_argv(),
            env=project.env,
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    _assert_both_answered(answers.read_text())


def _stored(project: Project) -> list[dict[str, Any]]:
    """The sessions in the store, as ``raw sessions list --json`` lists them."""
    listed = subprocess.run(
        project.raw("sessions", "list", "--config", str(project.config), "--json"),
        env=project.env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert listed.returncode == 0, listed.stderr
    found: list[dict[str, Any]] = json.loads(listed.stdout)
    return found


def test_a_new_session_that_gets_no_prompt_is_kept_for_a_later_connection(
    project: Project,
) -> None:
    # A client may create a session in one connection and prompt it in another
    # (acpx sessions new, then acpx prompt): the session it was given must still exist.
    done = subprocess.run(
        project.acp_argv(),
        env=project.env,
        input=_requests(project),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    _assert_both_answered(done.stdout)
    created = _answers(done.stdout)[3]["result"]["sessionId"]
    assert [info["id"] for info in _stored(project)] == [created]


def test_a_cwd_that_is_no_directory_is_refused_and_changes_nothing(project: Project) -> None:
    session_id = raw_run(project, "hello")
    missing = project.root / "no-such-folder"
    a_file = project.work / "notes.txt"
    requests = [
        ("initialize", {"protocolVersion": 1}),
        ("session/new", {"cwd": str(missing), "mcpServers": []}),
        ("session/new", {"cwd": str(a_file), "mcpServers": []}),
        ("session/load", {"sessionId": session_id, "cwd": str(missing), "mcpServers": []}),
    ]
    lines = [
        {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
        for number, (method, params) in enumerate(requests, 1)
    ]
    done = subprocess.run(
        project.acp_argv(),
        env=project.env,
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    answers = _answers(done.stdout)
    for request_id, path, why in (
        (2, missing, "does not exist"),
        (3, a_file, "is not a directory"),
        (4, missing, "does not exist"),
    ):
        error = answers[request_id]["error"]
        assert error["code"] == -32602, error
        assert error["data"] == {"cwd": str(path), "message": f"cwd {json.dumps(str(path))} {why}"}
    assert not missing.exists()
    # Nothing was made, and the loaded session keeps its folder.
    assert [(info["id"], info["cwd"]) for info in _stored(project)] == [
        (session_id, str(project.work))
    ]


def test_a_load_piped_with_the_input_closed_at_once_replays_before_its_answer(
    project: Project,
) -> None:
    project.write(
        [
            {
                "text": "I'll read the note.",
                "tool_calls": [
                    {"name": "read_file", "arguments": {"files": [{"path": "notes.txt"}]}}
                ],
            },
            {"text": "The note says to buy milk."},
        ]
    )
    session_id = raw_run(project, "what does my note say?")
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/load",
            "params": {"sessionId": session_id, "cwd": str(project.work), "mcpServers": []},
        },
    ]
    done = subprocess.run(
        project.acp_argv(),
        env=project.env,
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    messages = [json.loads(line) for line in done.stdout.splitlines()]
    answered = [i for i, m in enumerate(messages) if m.get("id") == 2 and "method" not in m]
    assert len(answered) == 1, done.stdout
    assert messages[answered[0]]["result"] == {}
    replayed = [
        m["params"]["update"]["sessionUpdate"]
        for m in messages[: answered[0]]
        if m.get("method") == "session/update"
    ]
    assert replayed == [
        "user_message_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
    ], done.stdout
    assert all(m.get("method") != "session/update" for m in messages[answered[0] :])


def _refused(project: Project, *args: str, stdin: Any = None, input: str = "") -> str:
    """Run ``raw acp ARGS``, which must refuse to start: its stderr."""
    done = subprocess.run(
        project.acp_argv(*args),
        env=project.env,
        stdin=stdin,
        input=None if stdin is not None else input,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    return done.stderr


def test_a_log_file_that_cannot_be_opened_is_a_usage_error(project: Project) -> None:
    missing = project.root / "no-such-folder" / "acp.log"
    stderr = _refused(project, "--log-file", str(missing), input=_requests(project))
    assert stderr.startswith("raw: usage_invalid: cannot open the log file"), stderr
    assert "--log-file" in stderr


def test_an_agent_the_config_lacks_is_refused_at_startup(project: Project) -> None:
    stderr = _refused(project, "--agent", "nope", input=_requests(project))
    assert stderr.startswith("raw: config_invalid: no agent named 'nope'"), stderr


def test_several_agents_and_no_choice_is_refused_at_startup(project: Project) -> None:
    document = json.loads(project.config.read_text())
    document["agents"]["other"] = document["agents"]["coder"]
    project.config.write_text(json.dumps(document))
    stderr = _refused(project, input=_requests(project))
    assert stderr.startswith("raw: config_invalid: the config defines several agents"), stderr


def test_a_closed_stdin_is_a_usage_error(project: Project) -> None:
    # With no descriptor 0 there is nothing to serve on: one line, no traceback.
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" <&-', "sh", *project.acp_argv()],
        env=project.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith("raw: usage_invalid: cannot serve ACP"), done.stderr
    assert "Traceback" not in done.stderr
