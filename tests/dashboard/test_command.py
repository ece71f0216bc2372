"""``raw dashboard`` as a command: a plug-in command of ``raw``, its errors."""

from __future__ import annotations

import selectors
import socket
import subprocess
from pathlib import Path

from tests.conftest import raw_script
from tests.dashboard.conftest import Server


def run_raw(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [raw_script(), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def test_raw_lists_the_command_the_plug_in_adds(tmp_path: Path) -> None:
    listed = run_raw("--help", cwd=tmp_path)
    assert listed.returncode == 0
    assert "dashboard" in listed.stdout
    shown = run_raw("dashboard", "--help", cwd=tmp_path)
    assert shown.returncode == 0
    for option in ("--port", "--no-open", "--config", "--agent"):
        assert option in shown.stdout


def test_a_port_in_use_is_a_clear_error(dashboard: Server, tmp_path: Path) -> None:
    busy = run_raw(
        "dashboard", "--no-open", "--port", str(dashboard.port),
        "--config", str(dashboard.root / "raw.json"), cwd=tmp_path,
    )  # fmt: skip
    assert busy.returncode == 2
    assert busy.stdout == ""
    assert busy.stderr.startswith(
        f"raw: usage_invalid: cannot listen on 127.0.0.1:{dashboard.port}"
    ), busy.stderr
    assert "(at --port)" in busy.stderr
    assert "Traceback" not in busy.stderr


def test_an_agent_the_config_lacks_exits_2_before_the_url(
    dashboard: Server, tmp_path: Path
) -> None:
    # A server that started would print its URL and serve on: the bound is that case.
    unknown = run_raw(
        "dashboard", "--no-open", "--port", "0", "--agent", "nope",
        "--config", str(dashboard.root / "raw.json"), cwd=tmp_path, timeout=30,
    )  # fmt: skip
    assert unknown.returncode == 2
    assert unknown.stdout == ""
    assert unknown.stderr.startswith("raw: config_invalid: no agent named 'nope'"), unknown.stderr
    assert "Traceback" not in unknown.stderr


def test_a_bad_config_is_a_clear_error(tmp_path: Path) -> None:
    config = tmp_path / "raw.json"
    config.write_text('{"agents": 3}')
    bad = run_raw("dashboard", "--no-open", "--port", "0", "--config", str(config), cwd=tmp_path)
    assert bad.returncode == 2
    assert "config_invalid" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_it_listens_on_the_loopback_address_only(dashboard: Server) -> None:
    addresses = {str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None)}
    for address in addresses - {"127.0.0.1", "::1"}:
        with socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET) as probe:
            probe.settimeout(5)
            assert probe.connect_ex((address, dashboard.port)) != 0, address


def test_a_config_with_several_agents_starts_without_agent(tmp_path: Path) -> None:
    # Each session may name its agent (POST /api/sessions {"agent": ...}); none is needed
    # to start.
    config = tmp_path / "raw.json"
    config.write_text(
        '{"agents": {"a": {"tools": {"use": []}}, "b": {"tools": {"use": []}}}}',
        encoding="utf-8",
    )
    with subprocess.Popen(
        [raw_script(), "dashboard", "--no-open", "--port", "0", "--config", str(config)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
    ) as server:
        try:
            assert server.stdout is not None
            with selectors.DefaultSelector() as waiting:
                waiting.register(server.stdout, selectors.EVENT_READ)
                assert waiting.select(timeout=60), "no URL within 60 s"
            line = server.stdout.readline()
            assert line.startswith("http://127.0.0.1:"), (line, server.poll())
        finally:
            server.terminate()
            server.wait(timeout=30)
