"""builtin/write_file through the real dispatcher: both forms, effects, all-or-nothing,
atomic replacement, and the protected-folder rule."""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import stat
import subprocess
import sys
import tempfile
import time
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raw_builtin_tools.toolkit import (
    AddFile,
    DeleteFile,
    EditError,
    Hunk,
    Patch,
    UpdateFile,
    Workspace,
    overwrite,
    render_patch,
    replace_text,
    stage,
)
from raw_core.agent import Agent, load_agent
from raw_core.config import load_config
from raw_core.dispatch import Dispatcher
from raw_core.frozen import freeze, thaw
from raw_core.plugins import PluginHost
from raw_core.tools.calls import ToolCall
from raw_core.tools.results import ToolResult
from tests.conftest import Children

PROTECT = {
    "match": "builtin/write_file",
    "effect": "ask",
    "when": {"source": "effects", "any": "files[*].path", "regex": "/protected/"},
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def load(config_dir: Path, rules: list[dict[str, Any]] | None = None) -> Agent:
    config_dir.mkdir(parents=True, exist_ok=True)
    config = config_dir / "raw.json"
    agent = {"tools": {"use": ["builtin/write_file", "builtin/read_file"], "rules": rules or []}}
    config.write_text(json.dumps({"agents": {"test": agent}}), encoding="utf-8")
    host = PluginHost()
    host.load_entry_points()
    return load_agent(load_config(config), host=host)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.fixture
def dispatcher(tmp_path: Path, work: Path) -> Dispatcher:
    agent = load(tmp_path / "config")
    return Dispatcher(agent.registry, agent.policy, cwd=work)


async def write(dispatcher: Dispatcher, args: dict[str, Any]) -> ToolResult:
    return await dispatcher.dispatch(
        ToolCall(id="call-1", name="write_file", arguments=json.dumps(args))
    )


def snapshot(root: Path) -> dict[str, tuple[bytes, int] | None]:
    """Every file (content and permission bits) and folder (None) under ``root``."""
    found: dict[str, tuple[bytes, int] | None] = {}
    for path in sorted(root.rglob("*")):
        key = path.relative_to(root).as_posix()
        if path.is_dir():
            found[key] = None
        else:
            found[key] = (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
    return found


def files(root: Path) -> dict[str, bytes]:
    return {k: v[0] for k, v in snapshot(root).items() if v is not None}


# --- the operations form ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_operations_apply_in_order_each_on_the_previous_state(
    dispatcher: Dispatcher, work: Path
) -> None:
    (work / "lines.txt").write_text("one\ntwo\nthree\nfour\n", encoding="utf-8")
    result = await write(
        dispatcher,
        {
            "operations": [
                {"op": "overwrite", "path": "a.txt", "content": "alpha\nbeta\n"},
                {"op": "replace_text", "path": "a.txt", "old": "beta", "new": "BETA"},
                {"op": "append", "path": "a.txt", "content": "gamma\n"},
                {"op": "append", "path": "new/dir/b.txt", "content": "created"},
                {
                    "op": "replace_lines",
                    "path": "lines.txt",
                    "start_line": 2,
                    "end_line": 3,
                    "content": "TWO-THREE",
                },
                {
                    "op": "replace_lines",
                    "path": "lines.txt",
                    "start_line": 1,
                    "end_line": 0,
                    "content": "zero\n",
                },
            ]
        },
    )
    assert result.status == "ok", result.text()
    assert (work / "a.txt").read_text(encoding="utf-8") == "alpha\nBETA\ngamma\n"
    assert (work / "new" / "dir" / "b.txt").read_text(encoding="utf-8") == "created"
    assert (work / "lines.txt").read_text(encoding="utf-8") == "zero\none\nTWO-THREE\nfour\n"
    text = result.text()
    assert "[1/6] ok: overwrite a.txt" in text
    assert "[6/6] ok: replace_lines lines.txt\ninserted 1 line before line 1" in text
    assert thaw(result.effects) == {
        "files": [
            {"path": f"{work}/a.txt", "operation": "write"},
            {"path": f"{work}/new/dir/b.txt", "operation": "write"},
            {"path": f"{work}/lines.txt", "operation": "write"},
        ]
    }


@pytest.mark.anyio
async def test_replace_lines_counts_lines_as_an_editor_does(
    dispatcher: Dispatcher, work: Path
) -> None:
    (work / "f.txt").write_text("a\x0cb\nc\u2028d\ne\n", encoding="utf-8")
    result = await write(
        dispatcher,
        {
            "operations": [
                {
                    "op": "replace_lines",
                    "path": "f.txt",
                    "start_line": 2,
                    "end_line": 2,
                    "content": "C",
                }
            ]
        },
    )
    assert result.status == "ok", result.text()
    assert (work / "f.txt").read_text(encoding="utf-8") == "a\x0cb\nC\ne\n"


@pytest.mark.anyio
async def test_replace_text_must_match_exactly_once(dispatcher: Dispatcher, work: Path) -> None:
    (work / "f.txt").write_text("x = 1\nx = 1\n", encoding="utf-8")
    before = snapshot(work)
    ambiguous = await write(
        dispatcher,
        {"operations": [{"op": "replace_text", "path": "f.txt", "old": "x = 1", "new": "y"}]},
    )
    missing = await write(
        dispatcher,
        {"operations": [{"op": "replace_text", "path": "f.txt", "old": "z", "new": "y"}]},
    )
    assert ambiguous.code == missing.code == "tool_error"
    assert "error (ambiguous_match): replace_text f.txt" in ambiguous.text()
    assert "occurs 2 times" in ambiguous.text()
    assert "lines 1, 2" in ambiguous.text()
    assert "error (no_match): replace_text f.txt" in missing.text()
    assert snapshot(work) == before


@pytest.mark.anyio
async def test_a_failing_second_operation_changes_nothing(
    dispatcher: Dispatcher, work: Path
) -> None:
    (work / "keep.txt").write_text("original\n", encoding="utf-8")
    before = snapshot(work)
    result = await write(
        dispatcher,
        {
            "operations": [
                {"op": "overwrite", "path": "keep.txt", "content": "changed\n"},
                {"op": "replace_text", "path": "keep.txt", "old": "absent", "new": "x"},
                {"op": "overwrite", "path": "sub/new.txt", "content": "new\n"},
            ]
        },
    )
    assert result.status == "error"
    assert result.code == "tool_error"
    text = result.text()
    assert text.startswith("nothing was written")
    assert "[1/3] skipped: overwrite keep.txt\nnot applied" in text
    assert "[2/3] error (no_match): replace_text keep.txt" in text
    assert "[3/3] skipped: overwrite sub/new.txt\nnot applied" in text
    assert snapshot(work) == before


@pytest.mark.anyio
async def test_a_17_entry_batch_and_an_invalid_entry_change_nothing(
    dispatcher: Dispatcher, work: Path
) -> None:
    (work / "a.txt").write_text("a\n", encoding="utf-8")
    before = snapshot(work)
    seventeen = [{"op": "overwrite", "path": f"f{i}.txt", "content": "x"} for i in range(17)]
    too_many = await write(dispatcher, {"operations": seventeen})
    assert too_many.code == "invalid_arguments"
    assert "16" in too_many.text()
    invalid = [
        {"op": "overwrite", "path": "f1.txt", "content": "x"},
        {"op": "overwrite", "path": "a.txt", "content": "y"},
        {"op": "replace_lines", "path": "a.txt", "start_line": 5, "end_line": 2, "content": ""},
    ]
    rejected = await write(dispatcher, {"operations": invalid})
    assert rejected.code == "invalid_arguments"
    assert "operations[2]" in rejected.text()
    missing_field = await write(
        dispatcher,
        {
            "operations": [
                {"op": "overwrite", "path": "f1.txt", "content": "x"},
                {"op": "replace_text", "path": "a.txt", "old": "a"},
            ]
        },
    )
    assert missing_field.code == "invalid_arguments"
    assert "operations[1]: replace_text needs 'new'" in missing_field.text()
    stray_field = await write(
        dispatcher,
        {"operations": [{"op": "overwrite", "path": "a.txt", "content": "", "old": "a"}]},
    )
    assert "overwrite does not take 'old'" in stray_field.text()
    assert snapshot(work) == before


@pytest.mark.anyio
@pytest.mark.parametrize(
    "args",
    [
        {"path": "a.txt", "content": "x"},
        {"operations": []},
        {},
        {"operations": [{"op": "overwrite", "path": "a.txt", "content": "x"}], "patch": "x"},
        {"operations": [{"op": "rename", "path": "a.txt"}]},
        {"operations": [{"op": "overwrite", "path": "dir/", "content": "x"}]},
        {"patch": ""},
        {"operations": [{"op": "overwrite", "path": "a.txt", "content": "\ud800"}]},
        {"operations": [{"op": "overwrite", "path": "\udc80.txt", "content": "x"}]},
        {"patch": "*** Begin Patch\n*** Add File: a.txt\n+\ud800\n*** End Patch\n"},
    ],
    ids=[
        "old-single-shape",
        "empty",
        "neither-form",
        "both-forms",
        "unknown-op",
        "folder-path",
        "empty-patch",
        "surrogate-content",
        "surrogate-path",
        "surrogate-patch",
    ],
)
async def test_malformed_calls_are_invalid_arguments(
    dispatcher: Dispatcher, work: Path, args: dict[str, Any]
) -> None:
    result = await write(dispatcher, args)
    assert result.code == "invalid_arguments", result.text()
    assert snapshot(work) == {}


@pytest.mark.anyio
async def test_a_patch_that_does_not_parse_names_its_line(
    dispatcher: Dispatcher, work: Path
) -> None:
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\nbad line\n*** End Patch\n"
    result = await write(dispatcher, {"patch": patch})
    assert result.code == "invalid_arguments"
    assert "patch line 5: expected a hunk line" in result.text()


@pytest.mark.anyio
async def test_modes_are_kept_and_new_files_follow_the_umask(
    dispatcher: Dispatcher, work: Path
) -> None:
    script = work / "run.sh"
    script.write_text("echo one\n", encoding="utf-8")
    script.chmod(0o750)
    result = await write(
        dispatcher,
        {
            "patch": "*** Begin Patch\n*** Update File: run.sh\n-echo one\n+echo two\n"
            "*** Add File: fresh.txt\n+hello\n*** End Patch\n"
        },
    )
    assert result.status == "ok", result.text()
    assert script.read_text(encoding="utf-8") == "echo two\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((work / "fresh.txt").stat().st_mode) == 0o666 & ~umask
    assert sorted(snapshot(work)) == ["fresh.txt", "run.sh"]  # no temp files left


@pytest.mark.anyio
async def test_a_patch_adds_updates_moves_and_deletes(dispatcher: Dispatcher, work: Path) -> None:
    (work / "src").mkdir()
    (work / "src" / "app.py").write_text(
        "import os\n\n\ndef greet():\n    print('Hi')\n\n\ndef main():\n    greet()\n",
        encoding="utf-8",
    )
    (work / "src" / "app.py").chmod(0o700)
    (work / "old.txt").write_text("bye\n", encoding="utf-8")
    patch = (
        "*** Begin Patch\n"
        "*** Add File: docs/hello.md\n"
        "+# Hello\n"
        "+\n"
        "+world\n"
        "*** Update File: src/app.py\n"
        "*** Move to: src/main.py\n"
        "@@ def greet():\n"
        "-    print('Hi')\n"
        "+    print('Hello, world!')\n"
        "@@ def main():\n"
        "     greet()\n"
        "+    greet()\n"
        "*** End of File\n"
        "*** Delete File: old.txt\n"
        "*** End Patch\n"
    )
    result = await write(dispatcher, {"patch": patch})
    assert result.status == "ok", result.text()
    assert files(work) == {
        "docs/hello.md": b"# Hello\n\nworld\n",
        "src/main.py": (
            b"import os\n\n\ndef greet():\n    print('Hello, world!')\n\n\n"
            b"def main():\n    greet()\n    greet()\n"
        ),
    }
    assert stat.S_IMODE((work / "src" / "main.py").stat().st_mode) == 0o700
    assert thaw(result.effects) == {
        "files": [
            {"path": f"{work}/docs/hello.md", "operation": "write"},
            {"path": f"{work}/src/app.py", "operation": "rename_source"},
            {"path": f"{work}/src/main.py", "operation": "rename_destination"},
            {"path": f"{work}/old.txt", "operation": "delete"},
        ]
    }
    assert "[2/3] ok: update src/app.py -> src/main.py\napplied 2 hunks; moved to" in result.text()


@pytest.mark.anyio
async def test_patch_errors_are_per_entry_and_nothing_is_written(
    dispatcher: Dispatcher, work: Path
) -> None:
    (work / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    (work / "b.txt").write_text("b\n", encoding="utf-8")
    before = snapshot(work)
    patch = (
        "*** Begin Patch\n"
        "*** Add File: b.txt\n+again\n"
        "*** Update File: a.txt\n@@\n one\n-three\n+3\n"
        "*** Delete File: missing.txt\n"
        "*** Update File: a.txt\n*** Move to: b.txt\n"
        "*** Add File: c.txt\n+fine\n"
        "*** End Patch\n"
    )
    result = await write(dispatcher, {"patch": patch})
    text = result.text()
    assert result.code == "tool_error"
    assert "[1/5] error (file_exists): add b.txt" in text
    assert "[2/5] error (context_not_found): update a.txt" in text
    assert "hunk at patch line 5" in text
    assert "[3/5] error (file_not_found): delete missing.txt" in text
    assert "[4/5] error (destination_exists): update a.txt -> b.txt" in text
    assert "[5/5] skipped: add c.txt" in text
    assert snapshot(work) == before


@pytest.mark.anyio
async def test_a_file_that_is_not_text_is_not_edited(dispatcher: Dispatcher, work: Path) -> None:
    (work / "bin").write_bytes(b"\x00\x01")
    (work / "latin1.txt").write_bytes(b"caf\xe9\n")
    result = await write(
        dispatcher,
        {
            "operations": [
                {"op": "append", "path": "bin", "content": "x"},
                {"op": "replace_text", "path": "latin1.txt", "old": "caf", "new": "x"},
            ]
        },
    )
    assert "error (binary_file): append bin" in result.text()
    assert "error (not_utf8): replace_text latin1.txt" in result.text()
    overwrite = await write(
        dispatcher, {"operations": [{"op": "overwrite", "path": "bin", "content": "text\n"}]}
    )
    assert overwrite.status == "ok"
    assert (work / "bin").read_bytes() == b"text\n"


@pytest.mark.anyio
async def test_a_parent_that_is_a_file_is_an_error(dispatcher: Dispatcher, work: Path) -> None:
    (work / "plain").write_text("x", encoding="utf-8")
    result = await write(
        dispatcher, {"operations": [{"op": "overwrite", "path": "plain/child.txt", "content": "y"}]}
    )
    assert "error (not_a_directory)" in result.text()
    assert files(work) == {"plain": b"x"}


@pytest.mark.anyio
async def test_a_path_through_a_symbolic_link_is_refused(
    dispatcher: Dispatcher, work: Path
) -> None:
    """A link could lead a write outside what the effects name (and what a rule saw)."""
    outside = work.parent / "protected"
    outside.mkdir()
    (outside / "secret.txt").write_text("old\n", encoding="utf-8")
    (work / "link.txt").symlink_to(outside / "secret.txt")
    (work / "dirlink").symlink_to(outside, target_is_directory=True)
    (work / "dangling.txt").symlink_to(outside / "new" / "made.txt")
    for entry in (
        {"op": "replace_text", "path": "link.txt", "old": "old", "new": "new"},
        {"op": "overwrite", "path": "dirlink/x.txt", "content": "x"},
        {"op": "overwrite", "path": "dangling.txt", "content": "x"},
    ):
        result = await write(dispatcher, {"operations": [entry]})
        assert result.code == "tool_error", result.text()
        assert "symlink_refused" in result.text()
    assert (outside / "secret.txt").read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


@pytest.mark.anyio
async def test_links_above_the_working_directory_are_followed(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "project").mkdir(parents=True)
    (tmp_path / "home").symlink_to(real, target_is_directory=True)
    cwd = tmp_path / "home" / "project"
    agent = load(tmp_path / "config")
    linked = Dispatcher(agent.registry, agent.policy, cwd=str(cwd))
    result = await write(
        linked, {"operations": [{"op": "overwrite", "path": "notes.txt", "content": "hi\n"}]}
    )
    assert result.status == "ok", result.text()
    assert (real / "project" / "notes.txt").read_text(encoding="utf-8") == "hi\n"


# --- the protected-folder rule -------------------------------------------------------------


def protected_calls() -> list[Any]:
    def op(kind: str, path: str, **fields: Any) -> dict[str, Any]:
        return {"operations": [{"op": kind, "path": path, **fields}]}

    def patch(body: str) -> dict[str, Any]:
        return {"patch": f"*** Begin Patch\n{body}*** End Patch\n"}

    cases = []
    for spelled in ("protected/x.txt", "src/../protected/x.txt", "./protected//x.txt"):
        cases += [
            pytest.param(op("overwrite", spelled, content="y"), id=f"overwrite:{spelled}"),
            pytest.param(op("append", spelled, content="y"), id=f"append:{spelled}"),
            pytest.param(
                op("replace_text", spelled, old="x", new="y"), id=f"replace_text:{spelled}"
            ),
            pytest.param(
                op("replace_lines", spelled, start_line=1, end_line=1, content="y"),
                id=f"replace_lines:{spelled}",
            ),
            pytest.param(
                patch(f"*** Update File: {spelled}\n-x\n+y\n"), id=f"patch-update:{spelled}"
            ),
            pytest.param(patch(f"*** Delete File: {spelled}\n"), id=f"patch-delete:{spelled}"),
            pytest.param(
                patch(f"*** Update File: {spelled}\n*** Move to: out.txt\n"),
                id=f"move-out:{spelled}",
            ),
        ]
    for spelled in ("protected/new.txt", "src/../protected/new.txt", "./protected//new.txt"):
        cases += [
            pytest.param(patch(f"*** Add File: {spelled}\n+y\n"), id=f"patch-add:{spelled}"),
            pytest.param(
                patch(f"*** Update File: free.txt\n*** Move to: {spelled}\n"),
                id=f"move-in:{spelled}",
            ),
        ]
    return cases


@pytest.mark.anyio
@pytest.mark.parametrize("args", protected_calls())
async def test_the_protected_rule_asks_for_every_form(
    tmp_path: Path, work: Path, args: dict[str, Any]
) -> None:
    (work / "protected").mkdir()
    (work / "protected" / "x.txt").write_text("x\n", encoding="utf-8")
    (work / "free.txt").write_text("free\n", encoding="utf-8")
    agent = load(tmp_path / "config", [PROTECT])
    dispatcher = Dispatcher(agent.registry, agent.policy, cwd=work)
    before = snapshot(work)
    result = await write(dispatcher, args)
    assert result.code == "approval_unavailable", result.text()
    assert any("/protected/" in entry["path"] for entry in result.effects["files"])
    assert snapshot(work) == before


@pytest.mark.anyio
async def test_the_protected_rule_lets_other_writes_through(tmp_path: Path, work: Path) -> None:
    agent = load(tmp_path / "config", [PROTECT])
    dispatcher = Dispatcher(agent.registry, agent.policy, cwd=work)
    result = await write(
        dispatcher,
        {"operations": [{"op": "overwrite", "path": "protected_not/x.txt", "content": "y"}]},
    )
    assert result.status == "ok", result.text()
    approved = Dispatcher(agent.registry, agent.policy, cwd=work, approval=lambda request: _yes())
    result = await write(
        approved, {"operations": [{"op": "overwrite", "path": "protected/x.txt", "content": "y"}]}
    )
    assert result.status == "ok", result.text()
    assert (work / "protected" / "x.txt").read_text(encoding="utf-8") == "y"


async def _yes() -> bool:
    return True


# --- effects name exactly what changes (property) --------------------------------------------


@cache
def shared_agent() -> Agent:
    return load(Path(tempfile.mkdtemp(prefix="raw-write-file-agent-")))


EXISTING = ("a.txt", "b.txt", "d/c.txt", "d/e/f.txt")
FRESH = ("n1.txt", "d/n2.txt", "new/dir/n3.txt", "d/e/n4.txt", "n5.txt")


@st.composite
def tree_and_patch(draw: st.DrawFn) -> tuple[dict[str, list[str]], Patch]:
    tree = {}
    for name in EXISTING:
        if draw(st.booleans()):
            count = draw(st.integers(min_value=0, max_value=8))
            tree[name] = [f"{name} line {i}" for i in range(count)]
    fresh = list(FRESH)
    existing = list(tree)
    draw(st.randoms()).shuffle(existing)
    operations: list[AddFile | DeleteFile | UpdateFile] = []
    text = st.text(st.characters(exclude_characters="\n\r", exclude_categories=["Cs"]), max_size=12)
    while existing or fresh:
        choices = (["add"] if fresh else []) + (["delete", "update", "move"] if existing else [])
        kind = draw(st.sampled_from([*choices, "stop"]))
        if kind == "stop":
            break
        if kind == "add":
            lines = draw(st.lists(text, max_size=4))
            operations.append(AddFile(path=fresh.pop(), lines=tuple(lines)))
            continue
        path = existing.pop()
        if kind == "delete":
            operations.append(DeleteFile(path=path))
            continue
        hunks = draw(hunks_for(tree[path]))
        if kind == "move" and fresh:
            operations.append(UpdateFile(path=path, hunks=hunks, move_to=fresh.pop()))
        elif hunks:
            operations.append(UpdateFile(path=path, hunks=hunks))
    if not operations:
        operations.append(AddFile(path="fallback.txt", lines=("x",)))
    return tree, Patch(operations=tuple(operations))


@st.composite
def hunks_for(draw: st.DrawFn, lines: list[str]) -> tuple[Hunk, ...]:
    """Hunks that apply to ``lines`` (unique lines) and change them."""
    hunks: list[Hunk] = []
    position = 0
    while position < len(lines) and draw(st.booleans()):
        index = draw(st.integers(min_value=position, max_value=len(lines) - 1))
        body: list[tuple[Any, str]] = []
        if index > 0 and index - 1 >= position:
            body.append((" ", lines[index - 1]))
        if draw(st.booleans()):
            body.append(("-", lines[index]))
            body.append(("+", f"changed {lines[index]}"))
        else:
            body.append((" ", lines[index]))
            body.append(("+", f"inserted after {lines[index]}"))
        if index + 1 < len(lines) and draw(st.booleans()):
            body.append((" ", lines[index + 1]))
            position = index + 2
        else:
            position = index + 1
        hunks.append(Hunk(lines=tuple(body)))
    return tuple(hunks)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree_and_patch())
def test_effects_name_exactly_the_files_the_patch_changes(
    case: tuple[dict[str, list[str]], Patch],
) -> None:
    tree, patch = case
    agent = shared_agent()
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        for name, lines in tree.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        before = files(root)
        dispatcher = Dispatcher(agent.registry, agent.policy, cwd=root)
        result = anyio.run(write, dispatcher, {"patch": render_patch(patch)})
        assert result.status == "ok", result.text()
        after = files(root)
        changed = {
            f"{root}/{name}"
            for name in before.keys() | after.keys()
            if before.get(name) != after.get(name)
        }
        effects = {(entry["path"], entry["operation"]) for entry in result.effects["files"]}
        assert {path for path, _ in effects} == changed
        for path, operation in effects:
            name = path[len(str(root)) + 1 :]
            if operation in ("delete", "rename_source"):
                assert name in before
                assert name not in after
            elif operation == "rename_destination":
                assert name not in before
                assert name in after
            else:
                assert name in after


# --- atomic replacement under SIGKILL --------------------------------------------------------

WRITER = """
import itertools, sys
from raw_builtin_tools.toolkit import Workspace, overwrite
path = sys.argv[1]
contents = ["A" * 3_000_000, "B" * 2_000_000 + "end"]
print("ready", flush=True)
for turn in itertools.count():
    space = Workspace()
    overwrite(path, contents[turn % 2])(space, 0)
    space.commit()
"""


def test_a_writer_killed_mid_write_leaves_the_old_or_the_new_file(
    tmp_path: Path, children: Children
) -> None:
    target = tmp_path / "big.txt"
    old = "A" * 3_000_000
    target.write_text(old, encoding="utf-8")
    allowed = {old, "B" * 2_000_000 + "end"}
    chooser = random.Random(5)
    for _ in range(8):
        writer = children.popen(  # killed at the end even if an assertion fails first
            [sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE, text=True
        )
        assert writer.stdout is not None
        assert writer.stdout.readline() == "ready\n"
        time.sleep(chooser.uniform(0.01, 0.15))
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
        assert target.read_text(encoding="utf-8") in allowed
    assert [p.name for p in tmp_path.iterdir() if p.name == "big.txt"] == ["big.txt"]


json_text = st.text(max_size=30)
operation_entries = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["overwrite", "append", "replace_text", "replace_lines"]),
        "path": st.text(min_size=1, max_size=20),
    },
    optional={
        "content": json_text,
        "old": st.text(min_size=1),
        "new": json_text,
        "start_line": st.integers(1, 5),
        "end_line": st.integers(0, 5),
    },
)
patch_texts = st.one_of(
    st.text(max_size=80),
    st.lists(
        st.sampled_from(
            [
                "*** Begin Patch",
                "*** End Patch",
                "*** Add File: a",
                "+x",
                "@@",
                "@@ x",
                " ctx",
                "-old",
                "*** Update File: ../b",
                "*** Move to: //c",
                "*** Delete File: ./d/",
                "*** End of File",
                "",
            ]
        ),
        max_size=12,
    ).map("\n".join),
)


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.fixed_dictionaries({"operations": st.lists(operation_entries, min_size=1, max_size=16)}),
        st.fixed_dictionaries({"patch": patch_texts}),
    ),
    st.sampled_from(["/srv", "//srv/./x", "/"]),
)
def test_describe_effects_never_raises_and_always_fits_its_schema(
    arguments: dict[str, Any], cwd: str
) -> None:
    tool = shared_agent().registry.by_name("write_file")
    assert tool.describe_effects is not None
    assert tool.effects_validator is not None
    context = SimpleNamespace(cwd=cwd)
    effects = tool.describe_effects(freeze(arguments), context)
    tool.effects_validator.validate(effects)
    for entry in effects["files"]:
        path = entry["path"]
        assert path.startswith("/")
        assert not path.startswith("//")
        assert "/./" not in path + "/"
        assert "/../" not in path + "/"


@pytest.mark.anyio
async def test_a_long_file_name_still_gets_a_temporary_file(
    dispatcher: Dispatcher, work: Path
) -> None:
    name = "é" * 120 + ".txt"  # 244 bytes: the temporary name must be shortened
    (work / name).write_text("old\n", encoding="utf-8")
    result = await write(
        dispatcher, {"operations": [{"op": "overwrite", "path": name, "content": "new\n"}]}
    )
    assert result.status == "ok", result.text()
    assert files(work) == {name: b"new\n"}


# --- the commit, without the dispatcher ----------------------------------------------------


def test_a_file_changed_after_planning_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("one\n", encoding="utf-8")
    space = Workspace()
    replace_text(str(target), "one", "two")(space, 0)
    overwrite(str(tmp_path / "b.txt"), "new\n")(space, 1)
    target.write_text("someone else\n", encoding="utf-8")
    with pytest.raises(EditError) as caught:
        space.commit()
    assert caught.value.code == "changed_on_disk"
    assert caught.value.entry == 0
    assert files(tmp_path) == {"a.txt": b"someone else\n"}


def test_a_staging_failure_removes_temporary_files_and_new_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt").write_text("one\n", encoding="utf-8")
    space = Workspace()
    overwrite(str(tmp_path / "a.txt"), "two\n")(space, 0)
    overwrite(str(tmp_path / "new" / "deep" / "b.txt"), "b\n")(space, 1)
    overwrite(str(tmp_path / "c.txt"), "c\n")(space, 2)

    def failing_stage(target: str, data: bytes, *, mode: int | None = None) -> Any:
        if target.endswith("c.txt"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return stage(target, data, mode=mode)

    monkeypatch.setattr("raw_builtin_tools.toolkit.workspace.stage", failing_stage)
    before = snapshot(tmp_path)
    with pytest.raises(EditError) as caught:
        space.commit()
    assert (caught.value.code, caught.value.entry) == ("no_space", 2)
    assert snapshot(tmp_path) == before
