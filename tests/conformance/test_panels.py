"""Spec 000, "Panels", clause by clause: declaration, both ways of updating, the block
catalog, the limits, each of the nine error codes, and panel actions — with real tool
folders, turns of a scripted model and a real SQLite session store."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from raw_core import App, CallbackFrontEnd, Reply, ScriptedProvider, hookimpl, thaw
from raw_core.errors import ManifestInvalid, RawError
from raw_core.plugins import PluginHost
from raw_core.providers.contract import ModelRequest, ProviderEvent
from raw_core.sessions.backend import PanelUpdate
from raw_core.sessions.sqlite import TextBlock, ToolResultMessage
from raw_core.tools.calls import CallInfo, Verdict
from raw_core.tools.loader import ToolLoader

pytestmark = pytest.mark.anyio

# A tool driven by its arguments: each step is an update sent through context.panels
# ("via": "context", its return value or error code reported) or as a result block
# ("via": "result"); "get" reads panels; "stash" keeps the context for a later call, and
# "use_stash" tries the kept one; "raise" fails after the updates. "@M@" in a step becomes
# the marker, so the marker is in the documents the tool makes and not in its arguments.
BOARD = """
import json

STASH = {}

async def handler(args, context):
    report = []
    blocks = []
    if args.get("use_stash"):
        old = STASH["context"]
        try:
            await old.panels.update("plan", {"op": "close"})
        except Exception as exc:
            report.append(exc.code)
        try:
            old.panels.get("plan")
        except Exception as exc:
            report.append(exc.code)
    for step in args.get("steps", []):
        step = json.loads(json.dumps(step).replace("@M@", "panel-only-marker-7f3a"))
        if step.get("via") == "result":
            blocks.append({"type": "panel", "panel": step["panel"], **step["body"]})
            continue
        try:
            report.append(await context.panels.update(step["panel"], step["body"]))
        except Exception as exc:
            report.append(exc.code)
    for name in args.get("get", []):
        try:
            view = context.panels.get(name)
            report.append({"revision": view.revision, "closed": view.closed,
                           "document": view.document})
        except Exception as exc:
            report.append(exc.code)
    if args.get("stash"):
        STASH["context"] = context
    if args.get("raise"):
        raise RuntimeError("after the updates")
    pad = [{"type": "text", "text": args["pad"]}] if "pad" in args else []
    return {"content": [{"type": "json", "json": report}, *pad, *blocks]}
"""

PLAN = {
    "id": "plan",
    "title": "Plan",
    "icon": "checklist",
    "placement": "sidebar",
    "context": "summary",
    "acp_plan": True,
    "actions": [
        {"id": "review", "title": "Review", "type": "prompt", "prompt": "Review the plan."},
        {"id": "reset", "title": "Reset", "type": "tool", "arguments": {"reset": "all"}},
    ],
}
CHAT = {"id": "chat", "title": "Inline", "placement": "chat"}
MARKER = "panel-only-marker-7f3a"
M = "@M@"  # the tool writes MARKER for it


def doc(*texts: str) -> dict[str, Any]:
    return {
        "blocks": [
            {"type": "checklist", "items": [{"text": t, "status": "pending"} for t in texts]}
        ]
    }


def replace(text: str = M) -> dict[str, Any]:
    return {"op": "replace", "document": doc(text)}


def tool_folder(root: Path, name: str, panels: list[dict[str, Any]], code: str = BOARD) -> None:
    folder = root / "tools" / name
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "api_version": 2,
        "id": name,
        "version": "1.0.0",
        "name": name,
        "description": f"The {name} test tool.",
        "input_schema": {"type": "object", "properties": {"reset": {"type": "string"}}},
        "condition_sources": ["arguments"],
        "entry": "./tool.py",
        "panels": panels,
    }
    (folder / "tool.json").write_text(json.dumps(manifest))
    (folder / "tool.py").write_text(code)


class Feed:
    """A model whose next replies a test sets before each turn; it keeps every request."""

    name = "feed"

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        self.requests.append(request)
        return ScriptedProvider([self.replies.pop(0)]).stream(request)


class Project:
    def __init__(self, root: Path, rules: list[dict[str, Any]] | None = None) -> None:
        self.root = root
        tool_folder(root, "board", [PLAN, CHAT])
        tool_folder(root, "other", [{"id": "plan", "title": "Other plan"}])
        for index in range(5):
            panels = [{"id": f"p{i}", "title": f"P{i}"} for i in range(4)]
            tool_folder(root, f"many{index}", panels)
        use = ["agent/board", "agent/other", *(f"agent/many{i}" for i in range(5))]
        agent: dict[str, Any] = {"tools": {"use": use, "rules": rules or []}}
        (root / "raw.json").write_text(json.dumps({"agents": {"a": agent}}))
        self.model = Feed()
        self.shown: list[PanelUpdate] = []
        self.events: list[dict[str, Any]] = []

    def front_end(self, approve: bool | None = None) -> CallbackFrontEnd:
        async def show(update: PanelUpdate) -> None:
            self.shown.append(update)

        async def answer(request: Any) -> bool:
            assert approve is not None
            return approve

        return CallbackFrontEnd(
            on_event=lambda event: self.events.append(event.to_dict()),
            show_panel=show,
            approve=answer if approve is not None else None,
        )

    def app(self, host: PluginHost | None = None) -> Any:
        return App.open(
            self.root / "raw.json",
            host=host or PluginHost(),
            store_dir=self.root / "sessions",
            provider=self.model,
        )

    async def turn(
        self, app: Any, calls: list[tuple[str, dict[str, Any]]], session_id: str | None = None
    ) -> tuple[str, list[dict[str, Any]]]:
        """One turn making ``calls``; the session id and the calls' finished events."""
        self.model.replies = [Reply(tool_calls=tuple(calls)), Reply(text="ok")]
        start = len(self.events)
        async with app.open_session(session_id, front_end=self.front_end(), cwd=self.root) as s:
            await s.run_turn("go")
        finished = [e for e in self.events[start:] if e["type"] == "tool_call_finished"]
        return s.id, finished


def report(finished: dict[str, Any]) -> list[Any]:
    found: list[Any] = finished["full_content"][0]["json"]
    return found


def note(finished: dict[str, Any]) -> str:
    return str(finished["content"][-1]["text"])


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


# --- Declaration --------------------------------------------------------------------------


async def test_declarations_are_stored_with_every_update(project: Project) -> None:
    async with project.app() as app:
        sid, _ = await project.turn(
            app, [("board", {"steps": [{"panel": "plan", "body": replace()}]})]
        )
        (item,) = [i for i in (await app.page(sid)).items if i.kind == "panel"]
    declaration = item.to_dict()["declaration"]
    assert declaration["context"] == "summary"
    assert declaration["acp_plan"] is True
    assert declaration["placement"] == "sidebar"
    assert [a["id"] for a in declaration["actions"]] == ["review", "reset"]


def test_a_tool_declares_at_most_four_panels(tmp_path: Path) -> None:
    tool_folder(tmp_path, "five", [{"id": f"p{i}", "title": "P"} for i in range(5)])
    with pytest.raises(ManifestInvalid) as caught:
        ToolLoader().load(tmp_path / "tools" / "five")
    assert caught.value.field == "$.panels"


# --- Updates, both ways -------------------------------------------------------------------


async def test_a_result_block_is_applied_and_removed_before_hooks_cap_model_and_history(
    project: Project, tmp_path: Path
) -> None:
    seen: list[Any] = []

    class Watcher:
        @hookimpl
        def raw_tool_call(self, call: CallInfo) -> Any:
            async def middleware(info: CallInfo, call_next: Callable[[], Any]) -> Any:
                returned = await call_next()
                seen.append(returned)
                return returned

            return middleware

    host = PluginHost()
    host.register(Watcher(), name="watcher")
    big = doc(*(f"{M} {i:04d} " + "x" * 20 for i in range(700)))  # about 57 KiB
    steps = [{"via": "result", "panel": "plan", "body": {"op": "replace", "document": big}}]
    async with project.app(host) as app:
        sid, (finished,) = await project.turn(app, [("board", {"steps": steps})])
        page = await app.page(sid)
    # the middleware saw the result without its panel block
    assert [b["type"] for b in seen[0].to_dict()["content"]] == ["json"]
    # the cap did not count the document: nothing was cut
    assert finished["status"] == "ok"
    assert "truncated" not in json.dumps(finished["content"])
    assert note(finished) == "panel plan updated (revision 1)"
    # the model never received it, nor does the model context hold it
    assert all(MARKER not in json.dumps(r.messages, default=str) for r in project.model.requests)
    stored = [i.message for i in page.items if isinstance(i.message, ToolResultMessage)]
    assert MARKER not in json.dumps([str(m) for m in stored])
    # the history has it as a display-only panel item, the front end was shown it
    (item,) = [i for i in page.items if i.kind == "panel"]
    assert item.entry.revision == 1
    assert item.entry.source == "result"
    assert MARKER in json.dumps(item.to_dict())
    assert [(u.panel, u.revision) for u in project.shown] == [("plan", 1)]


async def test_context_updates_return_revisions_and_get_reads_the_last_one(
    project: Project,
) -> None:
    patch = [{"op": "replace", "path": "/blocks/0/items/0/status", "value": "done"}]
    steps = [
        {"panel": "plan", "body": replace("one")},
        {"panel": "plan", "body": {"op": "patch", "revision": 1, "patch": patch}},
        {"panel": "agent/board:plan", "body": replace("two")},
    ]
    async with project.app() as app:
        _, (finished,) = await project.turn(app, [("board", {"steps": steps, "get": ["plan"]})])
    first, second, third, view = report(finished)
    assert (first, second, third) == (1, 2, 3)
    assert view == {"revision": 3, "closed": False, "document": doc("two")}
    assert note(finished) == "panel plan updated (revision 3)"
    kinds = [e["type"] for e in project.events]
    assert kinds.count("panel_updated") == 3
    assert kinds.index("panel_updated") < kinds.index("tool_call_finished")


async def test_updates_are_included_with_an_error_result(project: Project) -> None:
    steps = [
        {"panel": "plan", "body": replace()},
        {"via": "result", "panel": "chat", "body": replace()},
    ]
    async with project.app() as app:
        _, (finished,) = await project.turn(app, [("board", {"steps": steps, "raise": True})])
    assert finished["code"] == "handler_error"
    assert [(u["panel"], u["revision"]) for u in finished["panels"]] == [("plan", 1)]
    assert finished["content"][-1]["text"] == "panel plan updated (revision 1)"


async def test_a_close_and_a_replace_reopens(project: Project) -> None:
    steps = [
        {"panel": "plan", "body": replace()},
        {"panel": "plan", "body": {"op": "close"}},
        {"panel": "plan", "body": {"op": "patch", "patch": []}},
    ]
    async with project.app() as app:
        sid, (first,) = await project.turn(app, [("board", {"steps": steps, "get": ["plan"]})])
        assert report(first) == [
            1,
            2,
            "panel_unknown",
            {"revision": 2, "closed": True, "document": None},
        ]
        assert note(first) == "panel plan closed (revision 2)"
        _, (again,) = await project.turn(app, [("board", {"steps": steps[:1]})], sid)
        assert report(again) == [3]


# --- Blocks -------------------------------------------------------------------------------


async def test_every_block_of_the_catalog_is_accepted_and_others_are_panel_invalid(
    project: Project,
) -> None:
    blocks = [
        {"type": "text", "text": "## Markdown"},
        {"type": "checklist", "items": [{"text": "a", "status": "in_progress"}]},
        {
            "type": "form",
            "fields": [
                {"type": "text", "id": "name", "label": "Name"},
                {
                    "type": "single_select",
                    "id": "one",
                    "label": "One",
                    "options": [{"value": "a", "label": "A"}],
                },
                {
                    "type": "multi_select",
                    "id": "many",
                    "label": "Many",
                    "options": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}],
                    "max_selected": 2,
                },
            ],
            "submit": {"label": "Send"},
            "cancel": {"label": "Cancel"},
        },
        {"type": "mermaid", "source": "graph TD; A-->B"},
    ]
    bad = [
        {"blocks": [{"type": "table", "rows": []}]},
        {"blocks": [{"type": "checklist", "items": [{"text": "a", "status": "later"}]}]},
        {
            "blocks": [
                {
                    "type": "form",
                    "fields": [
                        {"type": "text", "id": "a", "label": "A"},
                        {"type": "text", "id": "a", "label": "B"},
                    ],
                }
            ]
        },
        {"blocks": [{"type": "text", "text": "x", "color": "red"}]},
        {"pages": []},
    ]
    steps = [{"panel": "plan", "body": {"op": "replace", "document": {"blocks": blocks}}}]
    steps += [{"panel": "plan", "body": {"op": "replace", "document": d}} for d in bad]
    async with project.app() as app:
        _, (finished,) = await project.turn(app, [("board", {"steps": steps})])
    assert report(finished) == [1] + ["panel_invalid"] * len(bad)
    rejected = [u for u in finished["panels"] if u["error"]]
    assert rejected[0]["error"]["field"] == "$.document.blocks[0]"
    assert rejected[1]["error"]["field"] == "$.document.blocks[0].items[0].status"


async def test_a_patch_that_cannot_be_applied_says_which_operation_in_json(
    project: Project,
) -> None:
    def patch(*steps: dict[str, Any]) -> dict[str, Any]:
        return {"via": "result", "panel": "plan", "body": {"op": "patch", "patch": list(steps)}}

    item = "/blocks/0/items/0"
    steps = [
        {"panel": "plan", "body": replace("hi")},
        patch({"op": "test", "path": f"{item}/text", "value": "nope"}),
        patch(
            {"op": "test", "path": f"{item}/text", "value": "hi"},
            {"op": "remove", "path": "/blocks/4"},
        ),
        patch({"op": "add", "path": f"{item}/text/x", "value": 1}),
    ]
    async with project.app() as app:
        _, (finished,) = await project.turn(app, [("board", {"steps": steps})])
    rejected = [u["error"] for u in finished["panels"] if u["error"]]
    assert [(e["code"], e["field"], e["message"]) for e in rejected] == [
        (
            "panel_invalid",
            "$.patch[0]",
            f'patch operation 0 (test at "{item}/text") cannot be applied:'
            ' expected "nope", found "hi"',
        ),
        (
            "panel_invalid",
            "$.patch[1]",
            'patch operation 1 (remove at "/blocks/4") cannot be applied: nothing at "/blocks/4"',
        ),
        (
            "panel_invalid",
            "$.patch[0]",
            f'patch operation 0 (add at "{item}/text/x") cannot be applied:'
            f' "{item}/text" holds a string, not an object or an array',
        ),
    ]
    assert "<class" not in note(finished)
    assert 'expected "nope", found "hi"' in note(finished)


# --- Limits -------------------------------------------------------------------------------


async def test_sixteen_panels_per_session_a_closed_one_is_evicted(project: Project) -> None:
    open_all = {"steps": [{"panel": f"p{i}", "body": replace()} for i in range(4)]}
    async with project.app() as app:
        sid, finished = await project.turn(app, [(f"many{i}", open_all) for i in range(4)])
        assert [report(f) for f in finished] == [[1, 1, 1, 1]] * 4
        _, (full,) = await project.turn(app, [("many4", open_all)], sid)
        assert report(full) == ["panel_limit"] * 4
        close = {"steps": [{"panel": "p0", "body": {"op": "close"}}]}
        _, (closed,) = await project.turn(app, [("many0", close)], sid)
        assert report(closed) == [2]
        _, (made_room,) = await project.turn(app, [("many4", open_all)], sid)
        assert report(made_room) == [1, "panel_limit", "panel_limit", "panel_limit"]
        names = [(u.identity, u.panel) for u in await app.panels(sid)]
    assert len(names) == 16
    assert ("agent/many0", "p0") not in names
    assert ("agent/many4", "p0") in names


async def test_two_hundred_updates_per_panel_per_call_rejected_ones_count(
    project: Project,
) -> None:
    bad = {"op": "nothing"}
    steps = [{"panel": "plan", "body": replace()}] + [{"panel": "plan", "body": bad}] * 198
    steps += [{"panel": "plan", "body": replace("last")}, {"panel": "plan", "body": replace()}]
    steps += [{"panel": "chat", "body": replace()}]  # another panel has its own count
    async with project.app() as app:
        sid, (finished,) = await project.turn(app, [("board", {"steps": steps})])
        _, (next_call,) = await project.turn(app, [("board", {"steps": steps[:1]})], sid)
    codes = report(finished)
    assert codes[0] == 1
    assert codes[1:199] == ["panel_invalid"] * 198
    assert codes[199:] == [2, "panel_rate_limited", 1]
    assert report(next_call) == [3]  # the limit is per call


async def test_a_document_of_more_than_64_kib_is_panel_too_large(project: Project) -> None:
    def sized(total: int) -> dict[str, Any]:
        empty = len(json.dumps({"blocks": [{"type": "text", "text": ""}]}, separators=(",", ":")))
        return {"blocks": [{"type": "text", "text": "x" * (total - empty)}]}

    steps = [
        {"panel": "plan", "body": {"op": "replace", "document": sized(64 * 1024)}},
        {"panel": "plan", "body": {"op": "replace", "document": sized(64 * 1024 + 1)}},
        {
            "panel": "plan",
            "body": {
                "op": "patch",
                "patch": [
                    {"op": "add", "path": "/blocks/-", "value": {"type": "text", "text": "more"}}
                ],
            },
        },
    ]
    async with project.app() as app:
        _, (finished,) = await project.turn(app, [("board", {"steps": steps})])
    assert report(finished) == [1, "panel_too_large", "panel_too_large"]


# --- Errors -------------------------------------------------------------------------------


async def test_each_error_code(project: Project) -> None:
    steps = [
        {"panel": "plan", "body": {"op": "replace"}},  # panel_invalid
        {"panel": "notes", "body": replace()},  # panel_undeclared
        {"panel": "agent/other:plan", "body": replace()},  # panel_not_owned
        {"panel": "plan", "body": {"op": "patch", "patch": []}},  # panel_unknown
        {"panel": "plan", "body": replace()},
        {"panel": "plan", "body": {"op": "patch", "revision": 7, "patch": []}},  # conflict
        {"panel": "plan", "body": {"op": "patch", "patch": [{"op": "remove", "path": "/x"}]}},
    ]
    async with project.app() as app:
        sid, (finished,) = await project.turn(
            app, [("board", {"steps": steps, "get": ["chat", "agent/other:plan"], "stash": True})]
        )
        _, (later,) = await project.turn(app, [("board", {"use_stash": True})], sid)
    assert report(finished) == [
        "panel_invalid",
        "panel_undeclared",
        "panel_not_owned",
        "panel_unknown",
        1,
        "panel_revision_conflict",
        "panel_invalid",
        "panel_unknown",
        "panel_not_owned",
    ]
    assert report(later) == ["panel_closed_context", "panel_closed_context"]
    # panel_too_large, panel_rate_limited and panel_limit: the limit tests above


async def test_a_context_kept_past_its_call_refuses_panels_it_never_used(
    project: Project,
) -> None:
    """The call's ``context.panels`` was never read while it ran; read after the call
    ended, it refuses every use all the same."""
    async with project.app() as app:
        sid, _ = await project.turn(app, [("board", {"stash": True})])
        _, (later,) = await project.turn(app, [("board", {"use_stash": True})], sid)
    assert report(later) == ["panel_closed_context", "panel_closed_context"]


async def test_a_rejected_result_block_never_fails_the_tool(project: Project) -> None:
    steps = [
        {
            "via": "result",
            "panel": "chat",
            "body": {"op": "replace", "document": {"blocks": [{"type": "table"}]}},
        },
        {"via": "result", "panel": "missing", "body": {"op": "close"}},
    ]
    async with project.app() as app:
        sid, (finished,) = await project.turn(app, [("board", {"steps": steps})])
        page = await app.page(sid)
    assert finished["status"] == "ok"
    assert note(finished).split("\n") == [
        "panel chat update rejected: panel_invalid $.document.blocks[0]: unknown block type"
        ' "table"; the catalog has "text", "checklist", "form", "mermaid"',
        "panel missing update rejected: panel_undeclared the tool declares no panel"
        " 'missing' (it declares: chat, plan)",
    ]
    errors = [i.to_dict()["error"]["code"] for i in page.items if i.kind == "panel"]
    assert errors == ["panel_invalid", "panel_undeclared"]
    assert project.shown == []  # a rejected update is not shown as a panel


# --- What the model and the history get ---------------------------------------------------


async def test_the_model_never_receives_a_document_and_a_resume_shows_the_last_revision(
    project: Project,
) -> None:
    steps = [{"panel": "plan", "body": replace(f"{M} {n}")} for n in range(3)]
    async with project.app() as app:
        sid, _ = await project.turn(app, [("board", {"steps": steps})])
    async with project.app() as app:  # a new process would do the same
        shown_before = len(project.shown)
        async with app.open_session(sid, front_end=project.front_end(), cwd=project.root) as s:
            (plan,) = s.panels
            assert (plan.panel, plan.revision) == ("plan", 3)
            assert thaw(plan.document) == doc(f"{MARKER} 2")
            project.model.replies = [
                Reply(tool_calls=(("board", {"steps": steps[:1]}),)),
                Reply(text="ok"),
            ]
            await s.run_turn("again")
        assert project.shown[shown_before].revision == 4
    for request in project.model.requests:
        assert MARKER not in json.dumps([str(m) for m in request.messages])


# --- Panel actions ------------------------------------------------------------------------


async def test_a_prompt_action_drafts_a_message(project: Project) -> None:
    async with project.app() as app:
        sid, _ = await project.turn(
            app, [("board", {"steps": [{"panel": "plan", "body": replace()}]})]
        )
        result = await app.panel_action(sid, "agent/board:plan", "review")
        assert (result.kind, result.prompt) == ("prompt", "Review the plan.")
        for name, action, code in [
            ("agent/board:plan", "launch", "panel_invalid"),
            ("agent/board:chat", "review", "panel_invalid"),
            ("agent/board:nothing", "review", "panel_undeclared"),
        ]:
            with pytest.raises(RawError) as caught:
                await app.panel_action(sid, name, action)
            assert caught.value.code == code


async def test_a_tool_action_runs_through_the_pipeline_as_a_user_action(
    tmp_path: Path,
) -> None:
    sources: list[str] = []

    class Recorder:
        @hookimpl
        def raw_tool_check(self, call: CallInfo, verdict: Verdict) -> None:
            sources.append(call.payload()["tool"]["source"])

    host = PluginHost()
    host.register(Recorder(), name="recorder")
    rule = {
        "match": "agent/board",
        "effect": "ask",
        "when": {"source": "arguments", "any": "reset", "regex": "."},
    }
    project = Project(tmp_path, rules=[rule])
    async with project.app(host) as app:
        sid, _ = await project.turn(
            app, [("board", {"steps": [{"panel": "plan", "body": replace()}]})]
        )
        # an ask rule still asks: the click is no approval; nobody can answer here
        refused = await app.panel_action(sid, "agent/board:plan", "reset")
        assert refused.result is not None
        assert refused.result.code == "approval_unavailable"
        asked: list[str] = []

        async def approve(request: Any) -> bool:
            asked.append(request.identity)
            return True

        front_end = CallbackFrontEnd(approve=approve)
        done = await app.panel_action(sid, "agent/board:plan", "reset", front_end=front_end)
        assert asked == ["agent/board"]
        assert done.result is not None
        assert done.result.status == "ok"
        page = await app.page(sid)
        context = await (await app.backend()).read_context(sid)
    assert sources == ["model", "user_action", "user_action"]
    assert page.items[-1].kind == "tool_output"  # the action's output is display-only
    assert not any("action_" in json.dumps(str(m)) for m in context)


async def test_an_action_waits_for_no_turn(project: Project) -> None:
    started = anyio.Event()
    release = anyio.Event()

    async with project.app() as app:
        sid, _ = await project.turn(
            app, [("board", {"steps": [{"panel": "plan", "body": replace()}]})]
        )
        project.model.replies = [Reply(text="held")]
        async with app.open_session(sid, front_end=project.front_end()) as session:
            original = project.model.stream

            def held(request: ModelRequest) -> AsyncIterator[ProviderEvent]:
                async def events() -> AsyncIterator[ProviderEvent]:
                    started.set()
                    await release.wait()
                    async for event in original(request):
                        yield event

                return events()

            project.model.stream = held  # type: ignore[method-assign]
            async with anyio.create_task_group() as group:
                group.start_soon(session.run_turn, "wait")
                await started.wait()
                with pytest.raises(RawError) as caught:
                    await app.panel_action(sid, "agent/board:plan", "review")
                release.set()
    assert caught.value.code == "turn_in_progress"


async def test_the_note_counts_toward_the_result_cap(project: Project) -> None:
    from raw_core.tools.results import model_bytes

    steps = [{"via": "result", "panel": "plan", "body": replace("y" * 5000)}]
    async with project.app() as app:
        padded = await app.call_tool(
            "agent/board", {"steps": steps, "pad": "x" * 2000}, max_output_bytes=300
        )
        failed = await app.call_tool(
            "agent/board",
            {"steps": [{"panel": "plan", "body": replace()}], "raise": True},
            max_output_bytes=100,
        )
    assert padded.truncated
    assert failed.code == "handler_error"
    for outcome, cap in ((padded, 300), (failed, 100)):
        assert model_bytes(outcome.content) <= cap
        last = outcome.content[-1]
        assert isinstance(last, TextBlock)
        assert last.text == "panel plan updated (revision 1)"
