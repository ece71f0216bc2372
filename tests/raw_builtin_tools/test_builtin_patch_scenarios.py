"""Patch scenarios of the kinds models send, run through the real dispatcher on real files.

Each scenario is a tree of files, a patch, and either the whole tree expected afterwards or
the error the call must end with. Every failed call must leave the tree byte-identical
(contents, permission bits, folders) and no temporary file behind.
"""

from __future__ import annotations

import json
import stat
from dataclasses import dataclass
from pathlib import Path

import pytest

from raw_core.agent import load_agent
from raw_core.config import load_config
from raw_core.dispatch import Dispatcher
from raw_core.plugins import PluginHost
from raw_core.tools.calls import ToolCall

Tree = dict[str, bytes]


@dataclass(frozen=True)
class Scenario:
    name: str
    tree: Tree
    patch: str
    after: Tree | None = None  # the whole tree on success
    error: str | None = None  # the error code on failure


def patch(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


NUMBERS = b"".join(b"%d\n" % n for n in range(1, 9))
CLASSES = (
    b"class A:\n    def run(self):\n        pass\nclass B:\n    def run(self):\n        pass\n"
)

PASSING = [
    Scenario(
        "add a file in new folders",
        {},
        patch("*** Add File: docs/guide/intro.md", "+# Intro", "+", "+Read me."),
        after={"docs/guide/intro.md": b"# Intro\n\nRead me.\n"},
    ),
    Scenario(
        "add, update and delete in one patch",
        {"keep.txt": b"alpha\nbeta\n", "obsolete.txt": b"gone soon\n"},
        patch(
            "*** Add File: fresh.txt",
            "+new",
            "*** Update File: keep.txt",
            "@@",
            " alpha",
            "-beta",
            "+gamma",
            "*** Delete File: obsolete.txt",
        ),
        after={"fresh.txt": b"new\n", "keep.txt": b"alpha\ngamma\n"},
    ),
    Scenario(
        "several hunks in one file",
        {"n.txt": NUMBERS},
        patch("*** Update File: n.txt", "@@", " 1", "-2", "+two", " 3", "@@", " 6", "-7", "+seven"),
        after={"n.txt": NUMBERS.replace(b"2\n", b"two\n").replace(b"7\n", b"seven\n")},
    ),
    Scenario(
        "move into a new folder with an edit",
        {"old/name.txt": b"from\n", "old/other.txt": b"stays\n"},
        patch(
            "*** Update File: old/name.txt",
            "*** Move to: renamed/deep/name.txt",
            "@@",
            "-from",
            "+to",
        ),
        after={"old/other.txt": b"stays\n", "renamed/deep/name.txt": b"to\n"},
    ),
    Scenario(
        "a move alone",
        {"a.txt": b"same\n"},
        patch("*** Update File: a.txt", "*** Move to: b.txt"),
        after={"b.txt": b"same\n"},
    ),
    Scenario(
        "append at the end of the file",
        {"t.txt": b"first\nlast\n"},
        patch("*** Update File: t.txt", "@@", " last", "+after last", "*** End of File"),
        after={"t.txt": b"first\nlast\nafter last\n"},
    ),
    Scenario(
        "an addition with no context goes to the end",
        {"t.txt": b"one\ntwo\n"},
        patch("*** Update File: t.txt", "@@", "+three"),
        after={"t.txt": b"one\ntwo\nthree\n"},
    ),
    Scenario(
        "a hunk that only removes",
        {"t.txt": b"keep\ndrop 1\ndrop 2\nkeep too\n"},
        patch("*** Update File: t.txt", "@@", "-drop 1", "-drop 2"),
        after={"t.txt": b"keep\nkeep too\n"},
    ),
    Scenario(
        "anchors narrow the place",
        {"m.py": CLASSES},
        patch(
            "*** Update File: m.py",
            "@@ class B:",
            "@@ def run(self):",
            "-        pass",
            "+        return 2",
        ),
        after={"m.py": CLASSES[: -len(b"pass\n")] + b"return 2\n"},
    ),
    Scenario(
        "a unified-diff range header",
        {"t.txt": b"a\nb\nc\n"},
        patch("*** Update File: t.txt", "@@ -2,2 +2,2 @@", " b", "-c", "+C"),
        after={"t.txt": b"a\nb\nC\n"},
    ),
    Scenario(
        "the first hunk without its @@",
        {"t.txt": b"import os\n"},
        patch("*** Update File: t.txt", " import os", "+import sys"),
        after={"t.txt": b"import os\nimport sys\n"},
    ),
    Scenario(
        "markers written with leading white space",
        {"t.txt": b"old\n"},
        "  *** Begin Patch\n  *** Update File: t.txt\n@@\n-old\n+new\n*** End of File\n"
        "\t*** Add File: u.txt\n+u\n *** End Patch\n",
        after={"t.txt": b"new\n", "u.txt": b"u\n"},
    ),
    Scenario(
        "context without the file's trailing white space",
        {"t.txt": b"spaced   \nold\n"},
        patch("*** Update File: t.txt", "@@", " spaced", "-old", "+new"),
        after={"t.txt": b"spaced   \nnew\n"},
    ),
    Scenario(
        "ASCII context for typographic punctuation",
        {"t.md": "Pages 3\u20135 \u2014 \u201cdraft\u201d\nstatus:\u00a0open\n".encode()},
        patch(
            "*** Update File: t.md", "@@", ' Pages 3-5 - "draft"', "-status: open", "+status: done"
        ),
        after={"t.md": "Pages 3\u20135 \u2014 \u201cdraft\u201d\nstatus: done\n".encode()},
    ),
    Scenario(
        "non-ASCII text is kept as written",
        {"t.txt": "na\u00efve caf\u00e9\n".encode()},
        patch(
            "*** Update File: t.txt", "@@", "-na\u00efve caf\u00e9", "+na\u00efve caf\u00e9 \u2705"
        ),
        after={"t.txt": "na\u00efve caf\u00e9 \u2705\n".encode()},
    ),
    Scenario(
        "a CRLF file stays CRLF",
        {"w.txt": b"one\r\ntwo\r\n"},
        patch("*** Update File: w.txt", "@@", " one", "-two", "+2", "+3"),
        after={"w.txt": b"one\r\n2\r\n3\r\n"},
    ),
    Scenario(
        "a file without a final newline keeps it that way",
        {"t.txt": b"a\nb"},
        patch("*** Update File: t.txt", "@@", "-b", "+B"),
        after={"t.txt": b"a\nB"},
    ),
    Scenario(
        "blank lines after End of File",
        {"t.txt": b"x\n"},
        patch(
            "*** Update File: t.txt",
            "@@",
            " x",
            "+y",
            "*** End of File",
            "",
            "*** Add File: n.txt",
            "+n",
            "",
        ),
        after={"t.txt": b"x\ny\n", "n.txt": b"n\n"},
    ),
    Scenario(
        "the same file twice, each on the state the first left",
        {"t.txt": b"v1\n"},
        patch(
            "*** Update File: t.txt",
            "@@",
            "-v1",
            "+v2",
            "*** Update File: t.txt",
            "@@",
            "-v2",
            "+v3",
        ),
        after={"t.txt": b"v3\n"},
    ),
]

FAILING = [
    Scenario(
        "context that is not in the file",
        {"t.txt": b"real\n"},
        patch("*** Update File: t.txt", "@@", " imagined", "-real", "+x"),
        error="context_not_found",
    ),
    Scenario(
        "an update of a missing file",
        {"t.txt": b"x\n"},
        patch("*** Update File: missing.txt", "@@", "-x", "+y"),
        error="file_not_found",
    ),
    Scenario(
        "a delete of a missing file",
        {"t.txt": b"x\n"},
        patch("*** Delete File: missing.txt"),
        error="file_not_found",
    ),
    Scenario(
        "a delete of a folder",
        {"dir/inside.txt": b"x\n"},
        patch("*** Delete File: dir"),
        error="is_a_directory",
    ),
    Scenario(
        "an add over an existing file",
        {"t.txt": b"mine\n"},
        patch("*** Add File: t.txt", "+theirs"),
        error="file_exists",
    ),
    Scenario(
        "a move onto an existing file",
        {"a.txt": b"a\n", "b.txt": b"b\n"},
        patch("*** Update File: a.txt", "*** Move to: b.txt", "@@", "-a", "+A"),
        error="destination_exists",
    ),
    Scenario(
        "a failure after entries that would apply",
        {"a.txt": b"a\n"},
        patch(
            "*** Add File: created.txt",
            "+made",
            "*** Update File: a.txt",
            "@@",
            "-a",
            "+A",
            "*** Update File: a.txt",
            "@@",
            "-not there",
            "+x",
        ),
        error="context_not_found",
    ),
    Scenario(
        "hunks out of the file's order",
        {"n.txt": NUMBERS},
        patch("*** Update File: n.txt", "@@", "-7", "+seven", "@@", "-2", "+two"),
        error="context_not_found",
    ),
    Scenario(
        "an update of a binary file",
        {"b.bin": b"\x00\x01\n"},
        patch("*** Update File: b.bin", "@@", "+x"),
        error="binary_file",
    ),
    Scenario(
        "an unknown header",
        {"t.txt": b"x\n"},
        patch("*** Rename File: t.txt"),
        error="invalid_arguments",
    ),
    Scenario("no operations", {"t.txt": b"x\n"}, patch(), error="invalid_arguments"),
    Scenario(
        "an update hunk with no lines",
        {"t.txt": b"x\n"},
        patch("*** Update File: t.txt", "@@"),
        error="invalid_arguments",
    ),
    Scenario(
        "no End Patch",
        {"t.txt": b"x\n"},
        "*** Begin Patch\n*** Delete File: t.txt\n",
        error="invalid_arguments",
    ),
    Scenario(
        "a hunk line without its prefix",
        {"t.txt": b"x\n"},
        patch("*** Update File: t.txt", "@@", "-x", "y"),
        error="invalid_arguments",
    ),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def dispatcher(tmp_path: Path) -> Dispatcher:
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps({"agents": {"a": {"tools": {"use": ["builtin/write_file"]}}}}),
        encoding="utf-8",
    )
    host = PluginHost()
    host.load_entry_points()
    agent = load_agent(load_config(config), host=host)
    (tmp_path / "work").mkdir()
    return Dispatcher(agent.registry, agent.policy, cwd=tmp_path / "work")


def plant(root: Path, scenario: Scenario) -> None:
    for name, content in scenario.tree.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        path.chmod(0o640)


def snapshot(root: Path) -> dict[str, tuple[bytes, int] | None]:
    """Every file (bytes, permission bits) and folder (None) under ``root``."""
    return {
        path.relative_to(root).as_posix(): (
            None if path.is_dir() else (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
        )
        for path in sorted(root.rglob("*"))
    }


async def run(dispatcher: Dispatcher, text: str) -> tuple[str, str | None]:
    result = await dispatcher.dispatch(
        ToolCall(id="call-1", name="write_file", arguments=json.dumps({"patch": text}))
    )
    return result.text(), result.code


@pytest.mark.anyio
@pytest.mark.parametrize("scenario", PASSING, ids=lambda s: s.name)
async def test_the_patch_applies(dispatcher: Dispatcher, scenario: Scenario) -> None:
    root = Path(dispatcher.cwd)
    plant(root, scenario)
    text, code = await run(dispatcher, scenario.patch)
    assert code is None, text
    files = {k: v[0] for k, v in snapshot(root).items() if v is not None}
    assert files == scenario.after


@pytest.mark.anyio
@pytest.mark.parametrize("scenario", FAILING, ids=lambda s: s.name)
async def test_the_patch_fails_and_the_tree_is_untouched(
    dispatcher: Dispatcher, scenario: Scenario
) -> None:
    root = Path(dispatcher.cwd)
    plant(root, scenario)
    before = snapshot(root)
    text, code = await run(dispatcher, scenario.patch)
    if scenario.error == "invalid_arguments":
        assert code == "invalid_arguments", text
    else:
        assert code == "tool_error", text
        assert text.startswith("nothing was written"), text
        assert f"error ({scenario.error})" in text, text
    assert snapshot(root) == before
