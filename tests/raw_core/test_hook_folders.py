"""Hook folders as tool folders are: hook.json checked field by field (unknown fields with
their path), the folder rules (no link out of the root), the agent's hooks.use, and
subscriptions bound to the selected tools' schemas at load. Nothing of a rejected hook
ever runs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from raw_core import PluginHost, load_agent, load_config, load_hook
from raw_core.config import parse_config
from raw_core.errors import ConfigInvalid, HookInvalid, HookNotFound
from raw_core.hooks import HookSet, load_hooks, user_hooks_dir
from raw_core.policy.predicate import ToolShape
from tests.command_hooks import runs, write_config, write_hook, write_tool
from tests.conftest import raw_script


def rewrite(folder: Path, **changes: Any) -> None:
    manifest = json.loads((folder / "hook.json").read_text())
    for key, value in changes.items():
        if value is None:
            manifest.pop(key, None)
        else:
            manifest[key] = value
    (folder / "hook.json").write_text(json.dumps(manifest))


def test_a_valid_hook_loads_with_its_program_resolved_in_its_folder(tmp_path: Path) -> None:
    folder = write_hook(tmp_path, "guard", python="", match="builtin/*", timeout_ms=5000)
    hook = load_hook(folder, identity="agent/guard", root=tmp_path / "hooks")
    assert hook.identity == "agent/guard"
    assert hook.argv == (str((folder / "hook.py").resolve()),)
    assert hook.events == ("PreToolUse",)
    assert hook.match.matches("builtin/bash")
    assert not hook.match.matches("agent/echo")
    assert hook.to_dict()["timeout_ms"] == 5000


@pytest.mark.parametrize(
    ("changes", "field", "said"),
    [
        ({"author": "me"}, "$.author", "unknown field"),
        (
            {"when": {"source": "arguments", "any": "a", "regex": "x", "else": 1}},
            "$.when.else",
            "unknown field",
        ),
        ({"protocol_version": 1}, "$.protocol_version", "expected the integer 2, found 1"),
        ({"protocol_version": None}, "$.protocol_version", "required field is missing"),
        ({"id": "other"}, "$.id", 'id must equal the folder name "guard"'),
        ({"version": "1.0"}, "$.version", "major.minor.patch"),
        ({"events": []}, "$.events", "at least one event"),
        ({"events": ["BeforeTool"]}, "$.events[0]", "expected one of"),
        ({"events": ["Stop", "Stop"]}, "$.events[1]", "listed twice"),
        ({"command": []}, "$.command", "non-empty array"),
        ({"command": "./hook.py"}, "$.command", "expected an array"),
        ({"command": ["bin/hook"]}, "$.command[0]", "must be absolute or start with ./"),
        ({"command": ["./missing.py"]}, "$.command[0]", "is not a file in the hook folder"),
        ({"command": ["./../../escape.py"]}, "$.command[0]", "outside the hook folder"),
        ({"command": ["\ud800"]}, "$.command[0]", "found one with a lone surrogate"),
        ({"command": ["./hook.py", "ok", "a\udcffb"]}, "$.command[2]", "a lone surrogate"),
        ({"command": ["./hook.py", "a\u0000b"]}, "$.command[1]", "found one with a NUL character"),
        ({"timeout_ms": 0}, "$.timeout_ms", "above 0"),
        ({"events": ["Stop"], "match": "*"}, "$.match", "only valid when every event"),
        (
            {"when": {"source": "arguments", "any": "text", "regex": "(?<=a)b"}},
            "$.when.regex",
            "RE2 rejects",
        ),
        ({"when": {"source": "arguments", "any": "a..b", "regex": "x"}}, "$.when.any", ""),
    ],
)
def test_each_broken_rule_of_hook_json_is_hook_invalid_with_its_path(
    tmp_path: Path, changes: dict[str, Any], field: str, said: str
) -> None:
    folder = write_hook(tmp_path, "guard", python="")
    rewrite(folder, **changes)
    with pytest.raises(HookInvalid) as caught:
        load_hook(folder, identity="agent/guard", root=tmp_path / "hooks")
    assert caught.value.field == field
    assert said in caught.value.message
    # named by its file: hook.json, or the program when the fault is the program's path
    assert caught.value.message.startswith(f"agent/guard ({folder}")
    assert caught.value.context["hook"] == "agent/guard"


def test_hook_json_must_be_strict_json(tmp_path: Path) -> None:
    folder = write_hook(tmp_path, "guard", python="")
    (folder / "hook.json").write_text('{"id": "guard", "id": "guard"}')
    with pytest.raises(HookInvalid, match="duplicate key 'id'") as caught:
        load_hook(folder)
    assert caught.value.field == "$"


def test_a_program_that_is_not_executable_is_refused(tmp_path: Path) -> None:
    folder = write_hook(tmp_path, "guard", python="")
    (folder / "hook.py").chmod(0o644)
    with pytest.raises(HookInvalid, match="is not executable") as caught:
        load_hook(folder)
    assert caught.value.field == "$.command[0]"


def test_links_out_of_the_root_are_refused(tmp_path: Path) -> None:
    outside = write_hook(tmp_path / "elsewhere", "guard", python="")
    hooks = tmp_path / "project" / "hooks"
    hooks.mkdir(parents=True)
    os.symlink(outside, hooks / "guard")
    with pytest.raises(HookInvalid, match="outside its root"):
        load_hook(hooks / "guard", root=hooks)
    inside = write_hook(tmp_path / "project", "other", python="")
    (inside / "hook.json").unlink()
    os.symlink(outside / "hook.json", inside / "hook.json")
    rewrite(outside, id="other")
    with pytest.raises(HookInvalid, match=r"hook\.json is a link to .*outside the hook folder"):
        load_hook(inside, root=hooks)
    program = write_hook(tmp_path / "project", "prog", python="", command=["./run"])
    os.symlink(outside / "hook.py", program / "run")
    with pytest.raises(HookInvalid, match="outside the hook folder") as caught:
        load_hook(program, root=hooks)
    assert caught.value.field == "$.command[0]"


def test_hooks_use_finds_agent_and_local_hooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert user_hooks_dir() == tmp_path / "xdg" / "raw" / "hooks"
    write_hook(tmp_path, "project", python="")
    write_hook(tmp_path, "mine", python="", directory=user_hooks_dir())
    loaded = load_hooks(["local/mine", "agent/project"], config_dir=tmp_path)
    assert [h.identity for h in loaded] == ["local/mine", "agent/project"]
    with pytest.raises(HookNotFound, match="no hook folder at") as caught:
        load_hooks(["agent/project", "agent/absent"], config_dir=tmp_path, field="$.x")
    assert caught.value.field == "$.x[1]"
    with pytest.raises(HookNotFound, match="beside a config file"):
        load_hooks(["agent/project"], config_dir=None)


@pytest.mark.parametrize(
    ("hooks", "field", "said"),
    [
        ({"use": ["builtin/guard"]}, "$.agents.a.hooks.use[0]", "agent/<folder> or local/<folder>"),
        ({"use": ["agent/g", "agent/g"]}, "$.agents.a.hooks.use[1]", "selected twice"),
        ({"use": [], "timeout_ms": 600_001}, "$.agents.a.hooks.timeout_ms", "at most 600000"),
        ({"use": [], "every": 1}, "$.agents.a.hooks.every", "unknown field"),
        ({"use": "agent/g"}, "$.agents.a.hooks.use", "expected an array"),
    ],
)
def test_the_agents_hooks_section_is_checked(hooks: dict[str, Any], field: str, said: str) -> None:
    text = json.dumps({"agents": {"a": {"tools": {"use": []}, "hooks": hooks}}})
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(text)
    assert caught.value.field == field
    assert said in caught.value.message


def shape(identity: str, properties: dict[str, Any], **more: Any) -> ToolShape:
    return ToolShape.from_schemas(
        identity, input_schema={"type": "object", "properties": properties}, **more
    )


def test_a_when_is_bound_to_every_tool_its_match_selects(tmp_path: Path) -> None:
    folder = write_hook(
        tmp_path,
        "guard",
        python="",
        events=["PreToolUse", "PostToolUse"],
        match="builtin/*",
        when={"source": "arguments", "any": "command", "regex": "^rm "},
    )
    hook = load_hook(folder)
    bash = shape("builtin/bash", {"command": {"type": "string"}})
    hooks = HookSet.bind([hook], [bash, shape("agent/echo", {"text": {"type": "string"}})])
    assert hooks.for_call("PreToolUse", "builtin/bash", {"command": "rm -rf x"}, None) == (hook,)
    assert hooks.for_call("PostToolUse", "builtin/bash", {"command": "rm x"}, None) == (hook,)
    assert hooks.for_call("PreToolUse", "builtin/bash", {"command": "ls"}, None) == ()
    assert hooks.for_call("PreToolUse", "agent/echo", {"text": "rm x"}, None) == ()
    reads = shape("builtin/read_file", {"path": {"type": "string"}})
    with pytest.raises(ConfigInvalid) as caught:
        HookSet.bind([hook], [bash, reads], field="$.agents.a.hooks.use")
    error = caught.value
    assert error.field == "$.agents.a.hooks.use[0]"
    assert (error.context["hook"], error.context["tool"]) == ("local/guard", "builtin/read_file")
    assert "when.any does not fit it" in error.message


def test_for_call_keeps_hooks_use_order_and_drops_those_whose_when_fails(tmp_path: Path) -> None:
    def hook(name: str, regex: str | None) -> Any:
        when = {"source": "arguments", "any": "commands[*]", "regex": regex} if regex else None
        return load_hook(write_hook(tmp_path, name, python="", when=when))

    every, rm, push = hook("every", None), hook("rm", "^rm "), hook("push", "\\bgit\\s+push\\b")
    tool = shape("builtin/bash", {"commands": {"type": "array", "items": {"type": "string"}}})
    hooks = HookSet.bind([push, every, rm], [tool])

    def chosen(*commands: str) -> Any:
        return hooks.for_call("PreToolUse", "builtin/bash", {"commands": list(commands)}, None)

    assert chosen("ls", "git status") == (every,)
    assert chosen("rm x", "git push") == (push, every, rm)
    assert chosen("git push -f") == (push, every)
    assert chosen("ls", "rm -r y") == (every, rm)
    assert hooks.for_call("PostToolUse", "builtin/bash", {"commands": ["rm x"]}, None) == ()
    only_push = HookSet.bind([push], [tool])
    assert only_push.for_call("PreToolUse", "builtin/bash", {"commands": ["ls"]}, None) == ()
    assert only_push.for_call("PreToolUse", "builtin/bash", {"commands": ["git push"]}, None) == (
        push,
    )


def test_a_when_on_effects_needs_a_tool_that_declares_them(tmp_path: Path) -> None:
    folder = write_hook(
        tmp_path,
        "guard",
        python="",
        when={"source": "effects", "any": "files[*].path", "regex": "secret"},
    )
    with pytest.raises(ConfigInvalid, match=r"when\.source does not fit it"):
        HookSet.bind([load_hook(folder)], [shape("agent/echo", {"text": {"type": "string"}})])


def test_loading_an_agent_binds_its_hooks_and_runs_nothing(tmp_path: Path) -> None:
    write_tool(tmp_path)
    folder = write_hook(
        tmp_path, "guard", python="", when={"source": "arguments", "any": "nope", "regex": "x"}
    )
    write_config(tmp_path, ["agent/guard"])
    with pytest.raises(ConfigInvalid) as caught:
        load_agent(load_config(tmp_path / "raw.json"), host=PluginHost())
    assert caught.value.field == "$.agents.a.hooks.use[0]"
    rewrite(folder, when={"source": "arguments", "any": "text", "regex": "x"})
    agent = load_agent(load_config(tmp_path / "raw.json"), host=PluginHost())
    assert [h.identity for h in agent.hooks.hooks] == ["agent/guard"]
    assert runs(folder) == []


def test_a_hooks_own_time_limit_holds_unless_the_agent_lowers_it(tmp_path: Path) -> None:
    write_tool(tmp_path)
    write_hook(tmp_path, "patient", python="", timeout_ms=300_000)
    write_hook(tmp_path, "plain", python="")
    use = ["agent/patient", "agent/plain"]

    def limits(**hooks: Any) -> list[float]:
        write_config(tmp_path, use, hooks=hooks)
        agent = load_agent(load_config(tmp_path / "raw.json"), host=PluginHost())
        return [agent.hooks.timeout(hook) for hook in agent.hooks.hooks]

    assert limits() == [300.0, 60.0]  # its own 300000, the default 60000
    assert limits(timeout_ms=120_000) == [120.0, 60.0]  # the agent lowers, never raises
    assert limits(timeout_ms=1000) == [1.0, 1.0]


def run_raw(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [raw_script(), *args], capture_output=True, text=True, cwd=cwd, timeout=60
    )


def test_raw_hooks_check_and_list(tmp_path: Path) -> None:
    write_tool(tmp_path)
    good = write_hook(tmp_path, "guard", python="", match="agent/*")
    bad = write_hook(tmp_path, "bad", python="")
    rewrite(bad, colour="red")
    checked = run_raw("hooks", "check", "--json", str(good), str(bad), cwd=tmp_path)
    assert checked.returncode == 1, checked.stderr
    first, second = json.loads(checked.stdout)
    assert (first["ok"], first["id"], first["events"]) == (True, "guard", ["PreToolUse"])
    assert second["error"]["code"] == "hook_invalid"
    assert second["error"]["field"] == "$.colour"
    assert run_raw("hooks", "check", str(good), cwd=tmp_path).returncode == 0
    write_config(tmp_path, ["agent/guard"])
    listed = run_raw("hooks", "list", "--config", "raw.json", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    (entry,) = json.loads(listed.stdout)
    assert (entry["identity"], entry["match"], entry["events"]) == (
        "agent/guard",
        "agent/*",
        ["PreToolUse"],
    )
    text = run_raw("hooks", "list", "--config", "raw.json", cwd=tmp_path).stdout
    assert "agent/guard  1.0.0  (PreToolUse)" in text
    assert "match agent/*" in text
    write_config(tmp_path, ["agent/absent"])
    missing = run_raw("hooks", "list", "--config", "raw.json", cwd=tmp_path)
    assert missing.returncode == 2
    assert "hook_not_found" in missing.stderr
    assert runs(good) == []


def test_policy_explain_shows_which_hooks_would_run_and_runs_none(tmp_path: Path) -> None:
    write_tool(tmp_path)
    rm = write_hook(
        tmp_path,
        "rm-only",
        python="",
        events=["PreToolUse", "PostToolUse"],
        when={"source": "arguments", "any": "text", "regex": "^rm "},
    )
    write_hook(tmp_path, "elsewhere", python="", match="builtin/*")
    write_config(tmp_path, ["agent/rm-only", "agent/elsewhere"])
    args = ["policy", "explain", "agent/echo", '{"text": "rm -rf x"}', "--config", "raw.json"]
    shown = run_raw(*args, "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    found = json.loads(shown.stdout)["command_hooks"]
    assert [(h["hook"], h["event"], h["runs"]) for h in found] == [
        ("agent/rm-only", "PreToolUse", True),
        ("agent/rm-only", "PostToolUse", True),
        ("agent/elsewhere", "PreToolUse", False),
    ]
    assert "does not match agent/echo" in found[2]["why"]
    text = run_raw(*args, cwd=tmp_path).stdout
    assert "command hooks (not run here):" in text
    # one column each, as docs/reference/policy.md shows: the hooks padded to the longest
    lines = text.split("command hooks (not run here):\n")[1].splitlines()
    assert [line.split()[:3] for line in lines] == [
        ["PreToolUse", "agent/rm-only", "runs"],
        ["PostToolUse", "agent/rm-only", "runs"],
        ["PreToolUse", "agent/elsewhere", "skipped"],
    ]
    assert len({line.index(line.split()[2]) for line in lines}) == 1
    assert len({line.index("match '") for line in lines}) == 1
    assert runs(rm) == []


def test_raw_tools_call_runs_the_hooks(tmp_path: Path) -> None:
    write_tool(tmp_path)
    write_hook(tmp_path, "guard", sh="echo 'not in this repo' >&2\nexit 2\n")
    write_config(tmp_path, ["agent/guard"])
    result = run_raw(
        "tools", "call", "agent/echo", '{"text": "x"}', "--config", "raw.json", cwd=tmp_path
    )
    assert result.returncode == 1
    assert "error [hook_denied]: not in this repo" in result.stdout
