"""docs/getting-started.md shows a real terminal session: ``raw demo`` on a pseudo-terminal,
answered ``y``, captured by this test. What changes from run to run (the temporary folder,
the session id, timings) is written as a placeholder. Run with ``RAW_UPDATE_DOCS=1`` to
write a changed transcript into the page."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pexpect

from tests.conftest import Children, raw_script

PAGE = Path(__file__).parents[2] / "docs" / "getting-started.md"
BLOCK = re.compile(r"(<!-- terminal: raw demo -->\n```text\n)(?P<body>.*?)(```)", re.S)


def transcript(children: Children, root: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR",)}
    env.update(
        XDG_STATE_HOME=str(root / "state"),
        XDG_CONFIG_HOME=str(root / "config"),
        NO_COLOR="1",
        TERM="dumb",
    )
    screen = io.StringIO()
    child = children.spawn(
        raw_script(),
        ["demo", "--dir", str(root / "demo")],
        env=env,
        cwd=str(root),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 100),
    )
    child.logfile_read = screen
    child.expect(r"Run it\? \[y/N\]: ")
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    text = screen.getvalue().replace("\r\n", "\n")
    text = text.replace(str(root / "demo"), "/tmp/raw-demo")
    text = re.sub(r"\b[0-9a-f]{32}\b", "<session id>", text)
    return re.sub(r"\(\d+\.\d+ s", "(0.01 s", text)


def test_getting_started_shows_a_captured_demo(tmp_path: Path, children: Children) -> None:
    captured = transcript(children, tmp_path)
    # The approval is set apart, its effects (the command line it would run) first.
    request = captured[captured.index("╭─ builtin/bash needs approval") : captured.index("╰─")]
    assert request.index("│   run    rm -rf old-output") < request.index("│ Arguments:")
    page = PAGE.read_text(encoding="utf-8")
    found = BLOCK.search(page)
    assert found is not None, "getting-started.md has no <!-- terminal: raw demo --> block"
    if os.environ.get("RAW_UPDATE_DOCS") == "1":
        PAGE.write_text(page[: found.start("body")] + captured + page[found.end("body") :])
        return
    assert found["body"] == captured, "run with RAW_UPDATE_DOCS=1 to write the new transcript"
