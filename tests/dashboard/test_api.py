"""The dashboard's API over real HTTP on 127.0.0.1: the token, the Host and Origin checks,
the headers, a session's round trip with an approval, errors, preferences, and sessions
shared with the terminal under the one-writer rule."""

from __future__ import annotations

import json
from typing import Any

from tests.dashboard.conftest import Server, live
from tests.dashboard.project import FINAL_TEXT


def start(dashboard: Server, prompt: str = "Draw the flow and clean up") -> str:
    reply = dashboard.request("POST", "/api/sessions", {"prompt": prompt})
    assert reply.status == 202, reply.body
    session_id: str = reply.body["session_id"]
    return session_id


def test_every_request_needs_the_token(dashboard: Server) -> None:
    for path in ("/", "/api/sessions", "/static/app.js", "/static/vendor/mermaid.min.js"):
        reply = dashboard.request("GET", path, auth=False)
        assert reply.status == 401, path
        assert reply.body["error"]["code"] == "unauthorized"
    wrong = dashboard.request(
        "GET", "/api/sessions", auth=False, headers={"Cookie": "raw_dashboard=" + "x" * 43}
    )
    assert wrong.status == 401
    assert dashboard.request("GET", "/?token=nope", auth=False).status == 401


def test_the_url_trades_the_token_for_a_strict_http_only_cookie(dashboard: Server) -> None:
    reply = dashboard.request("GET", "/?token=" + dashboard.token, auth=False)
    assert reply.status == 303
    assert reply.headers["location"] == "/"
    cookie = reply.headers["set-cookie"]
    assert cookie.startswith(f"raw_dashboard={dashboard.token};")
    assert "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    page = dashboard.request("GET", "/")
    assert page.status == 200
    assert b"/static/app.js" in page.body


def test_a_foreign_host_is_refused_even_with_the_token(dashboard: Server) -> None:
    for host in (f"rebind.example:{dashboard.port}", "127.0.0.1:1", "127.0.0.1"):
        reply = dashboard.request("GET", "/api/sessions", headers={"Host": host})
        assert reply.status == 403, host
        assert reply.body["error"]["code"] == "forbidden_host"
    assert (
        dashboard.request(
            "GET", "/api/sessions", headers={"Host": f"localhost:{dashboard.port}"}
        ).status
        == 200
    )


def test_a_write_from_a_foreign_origin_is_refused_and_changes_nothing(dashboard: Server) -> None:
    before = dashboard.request("GET", "/api/sessions").body["sessions"]
    for origin in ("http://evil.example", f"http://127.0.0.1:{dashboard.port + 1}", "null"):
        reply = dashboard.request(
            "POST", "/api/sessions", {"prompt": "hi"}, headers={"Origin": origin}
        )
        assert reply.status == 403, origin
        assert reply.body["error"]["code"] == "forbidden_origin"
    no_origin = dashboard.request(
        "PUT", "/api/preferences", {"theme": "dark"}, headers={"Origin": ""}
    )
    assert no_origin.status == 403
    assert dashboard.request("GET", "/api/sessions").body["sessions"] == before


def test_every_response_carries_a_strict_content_security_policy(dashboard: Server) -> None:
    for reply in (
        dashboard.request("GET", "/"),
        dashboard.request("GET", "/api/sessions"),
        dashboard.request("GET", "/api/sessions", auth=False),
    ):
        policy = reply.headers["content-security-policy"]
        assert "default-src 'none'" in policy
        assert "script-src 'self';" in policy
        assert "frame-ancestors 'none'" in policy
        assert reply.headers["x-content-type-options"] == "nosniff"


def test_a_session_round_trip_with_an_approval(dashboard: Server) -> None:
    (dashboard.root / "junk.txt").write_text("junk\n")
    session_id = start(dashboard)
    events = dashboard.events(session_id, cursor="")
    try:
        shown = dashboard.request("GET", f"/api/sessions/{session_id}").body
        assert shown["title"] == "Draw the flow and clean up"
        asked = events.until(lambda e: e["type"] == "requests" and e["requests"])
        request = asked["requests"][0]
        assert request["kind"] == "approval"
        assert request["show"]["identity"] == "builtin/bash"
        assert request["show"]["effects"]["commands"][0]["programs"][0]["name"] == "rm"
        assert (dashboard.root / "junk.txt").exists()  # it waits for the answer
        answered = dashboard.request(
            "POST", f"/api/requests/{request['id']}", {"approved": True, "message": None}
        )
        assert answered.status == 200
        assert answered.body["state"] == "approved"
        assert answered.body["answer"]["by"] == "dashboard"
        again = dashboard.request("POST", f"/api/requests/{request['id']}", {"approved": False})
        assert again.status == 409
        assert again.body["error"]["code"] == "request_not_pending"
        events.until(
            lambda e: (
                e["type"] == "item"
                and e["item"]["kind"] == "message"
                and e["item"]["message"].get("text") == FINAL_TEXT
            )
        )
    finally:
        events.close()
    assert not (dashboard.root / "junk.txt").exists()
    page = dashboard.request("GET", f"/api/sessions/{session_id}/items?limit=500").body
    kinds = [item["kind"] for item in page["items"]]
    assert kinds.count("panel") == 2
    entries = [item for item in page["items"] if item["kind"] == "request"]
    assert [entry["state"] for entry in entries] == ["pending", "approved"]
    approval = entries[1]
    assert approval["request_kind"] == "approval"
    assert approval["answer"]["by"] == "dashboard"
    listed = dashboard.request("GET", "/api/sessions").body["sessions"]
    assert listed[0]["id"] == session_id  # newest activity first
    panels = dashboard.request("GET", f"/api/sessions/{session_id}/panels").body["panels"]
    assert {(p["identity"], p["panel"]) for p in panels} == {
        ("builtin/todo", "todo"),
        ("agent/diagram", "flow"),
    }


def test_live_events_stream_the_text_as_it_comes(dashboard: Server) -> None:
    session_id = start(dashboard, "stream it")
    events = dashboard.events(session_id, cursor="")
    try:
        asked = events.until(lambda e: e["type"] == "requests" and e["requests"])
        dashboard.request(
            "POST",
            f"/api/requests/{asked['requests'][0]['id']}",
            {"approved": False, "message": "keep it"},
        )
        ended = events.until(live("turn_ended"))
    finally:
        events.close()
    assert ended["event"]["reason"] == "completed"
    deltas = [
        e["event"]["text"]
        for e in events.seen
        if e["type"] == "live" and e["event"]["type"] == "text_delta"
    ]
    assert "".join(deltas).endswith(FINAL_TEXT)
    answered = [
        e for e in events.seen if e["type"] == "live" and e["event"]["type"] == "approval_answered"
    ]
    assert answered[0]["event"]["answer"] == {
        "approved": False,
        "by": "dashboard",
        "message": "keep it",
    }


def test_history_pages_with_the_stores_cursors(dashboard: Server) -> None:
    session_id = start(dashboard, "page me")
    events = dashboard.events(session_id, cursor="")
    try:
        asked = events.until(lambda e: e["type"] == "requests" and e["requests"])
        dashboard.request(
            "POST", f"/api/requests/{asked['requests'][0]['id']}", {"approved": False}
        )
        events.until(live("turn_ended"))
    finally:
        events.close()
    base = f"/api/sessions/{session_id}/items"
    first = dashboard.request("GET", base + "?limit=3&order=newest").body
    assert first["has_more"] is True
    assert [i["seq"] for i in first["items"]] == sorted(
        (i["seq"] for i in first["items"]), reverse=True
    )
    second = dashboard.request(
        "GET", f"{base}?limit=3&order=newest&cursor={first['next_cursor']}"
    ).body
    assert second["items"][0]["seq"] == first["items"][-1]["seq"] - 1
    whole = dashboard.request("GET", base + "?limit=500").body["items"]
    assert [i["seq"] for i in whole] == list(range(1, len(whole) + 1))


def test_errors_are_json_with_a_code_and_change_nothing(dashboard: Server) -> None:
    cases: list[tuple[str, str, Any, int, str]] = [
        ("GET", "/api/sessions/nope", None, 404, "session_not_found"),
        ("POST", "/api/sessions", {"prompt": ""}, 400, "invalid_request"),
        ("POST", "/api/sessions", {"prompt": 3}, 400, "invalid_request"),
        ("POST", "/api/sessions", [1], 400, "invalid_request"),
        ("POST", "/api/requests/req_0", {"approved": True}, 404, "request_not_found"),
        ("POST", "/api/requests/req_0", {"approved": "yes"}, 400, "invalid_request"),
        ("GET", "/api/sessions?limit=0", None, 400, "invalid_request"),
        ("PUT", "/api/preferences", {"theme": "neon"}, 400, "invalid_request"),
        ("PUT", "/api/preferences", {"font": "big"}, 400, "invalid_request"),
    ]
    before = dashboard.request("GET", "/api/sessions").body["sessions"]
    for method, path, body, status, code in cases:
        reply = dashboard.request(method, path, body)
        assert (reply.status, reply.body["error"]["code"]) == (status, code), (method, path)
    assert dashboard.request("GET", "/api/sessions").body["sessions"] == before
    bad = dashboard.request("POST", "/api/sessions", {"prompt": 3}).body["error"]
    assert bad["field"] == "$.prompt"


def test_preferences_live_in_the_state_folder_never_in_the_config(dashboard: Server) -> None:
    config_before = (dashboard.root / "raw.json").read_text()
    reply = dashboard.request("PUT", "/api/preferences", {"theme": "dark", "panels": "left"})
    assert reply.body == {"theme": "dark", "panels": "left"}
    stored = json.loads((dashboard.state / "raw" / "dashboard.json").read_text())
    assert stored == {"theme": "dark", "panels": "left"}
    assert dashboard.request("PUT", "/api/preferences", {"theme": "neon"}).status == 400
    assert json.loads((dashboard.state / "raw" / "dashboard.json").read_text()) == stored
    assert dashboard.request("GET", "/api/preferences").body == stored
    dashboard.request("PUT", "/api/preferences", {"theme": "auto", "panels": "right"})
    assert (dashboard.root / "raw.json").read_text() == config_before


def test_one_writer_decides_between_the_dashboard_and_the_terminal(dashboard: Server) -> None:
    session_id = start(dashboard, "hold it")
    events = dashboard.events(session_id, cursor="")
    try:
        asked = events.until(lambda e: e["type"] == "requests" and e["requests"])
        # While the dashboard's turn waits, the terminal can read the session, not write.
        shown = dashboard.raw("sessions", "show", session_id, "--json")
        assert shown.returncode == 0, shown.stderr
        resumed = dashboard.raw(
            "sessions",
            "resume",
            session_id,
            "--config",
            str(dashboard.root / "raw.json"),
            "--json",
            "more",
        )
        assert resumed.returncode != 0
        assert "session_locked" in resumed.stdout + resumed.stderr
        busy = dashboard.request("POST", f"/api/sessions/{session_id}/turns", {"prompt": "x"})
        assert busy.status == 409
        assert busy.body["error"]["code"] == "turn_in_progress"
        dashboard.request(
            "POST", f"/api/requests/{asked['requests'][0]['id']}", {"approved": False}
        )
        events.until(live("turn_ended"))
        events.until(lambda e: e["type"] == "status" and e["running"] is False)
    finally:
        events.close()
    # Once the turn ended, the terminal continues the session; the dashboard watches it.
    watching = dashboard.events(session_id)
    try:
        resumed = dashboard.raw(
            "sessions",
            "resume",
            session_id,
            "--config",
            str(dashboard.root / "raw.json"),
            "--json",
            "from the terminal",
        )
        prompt = watching.until(
            lambda e: (
                e["type"] == "item"
                and e["item"]["kind"] == "message"
                and e["item"]["message"]["role"] == "user"
            )
        )
    finally:
        watching.close()
    assert prompt["item"]["message"]["content"][0]["text"] == "from the terminal"
    assert resumed.returncode in (0, 1), resumed.stderr  # its ask cannot be answered there


def test_a_prompt_panel_action_drafts_a_message_and_a_tool_action_reruns_the_tool(
    dashboard: Server,
) -> None:
    session_id = start(dashboard, "act")
    events = dashboard.events(session_id, cursor="")
    try:
        asked = events.until(lambda e: e["type"] == "requests" and e["requests"])
        dashboard.request(
            "POST", f"/api/requests/{asked['requests'][0]['id']}", {"approved": False}
        )
        events.until(lambda e: e["type"] == "status" and e["running"] is False)
    finally:
        events.close()
    base = f"/api/sessions/{session_id}/panels/agent/diagram:flow/actions"
    drafted = dashboard.request("POST", base + "/explain")
    assert drafted.status == 200, drafted.body
    assert drafted.body == {
        "kind": "prompt",
        "panel": "agent/diagram:flow",
        "action": "explain",
        "prompt": "Explain the flow.",
        "result": None,
    }
    rerun = dashboard.request("POST", base + "/redraw")
    assert rerun.status == 200, rerun.body
    assert rerun.body["result"]["status"] == "ok"
    panels = dashboard.request("GET", f"/api/sessions/{session_id}/panels").body["panels"]
    flow = next(p for p in panels if p["panel"] == "flow")
    assert "redrawn" in flow["document"]["blocks"][1]["source"]
    unknown = dashboard.request("POST", base + "/nope")
    assert unknown.status >= 400


def test_cancel_ends_a_waiting_turn_and_its_ask(dashboard: Server) -> None:
    session_id = start(dashboard, "cancel me")
    events = dashboard.events(session_id, cursor="")
    try:
        asked = events.until(lambda e: e["type"] == "requests" and e["requests"])
        reply = dashboard.request("POST", f"/api/sessions/{session_id}/cancel")
        assert reply.body == {"cancelled": True}
        ended = events.until(live("turn_ended"))
        events.until(lambda e: e["type"] == "status" and e["running"] is False)
    finally:
        events.close()
    assert ended["event"]["reason"] == "cancelled"
    request_id = asked["requests"][0]["id"]
    late = dashboard.request("POST", f"/api/requests/{request_id}", {"approved": True})
    assert late.status == 409
    assert late.body["error"]["state"] == "cancelled"
    assert dashboard.request("POST", f"/api/sessions/{session_id}/cancel").body == {
        "cancelled": False
    }


def test_a_form_is_answered_by_id_and_invalid_values_keep_it_pending(dashboard: Server) -> None:
    reply = dashboard.request("POST", "/api/sessions", {"prompt": "ask me", "agent": "f"})
    assert reply.status == 202, reply.body
    session_id = reply.body["session_id"]
    events = dashboard.events(session_id, cursor="")
    try:
        asked = events.until(lambda e: e["type"] == "requests" and e["requests"])
        request = asked["requests"][0]
        assert request["kind"] == "interaction"
        form = request["show"]["document"]["blocks"][0]
        assert form["type"] == "form"
        assert [field["id"] for field in form["fields"]] == ["q1", "q2"]
        path = f"/api/requests/{request['id']}"
        wrong = dashboard.request("POST", path, {"values": {"q1": "Cobol", "q2": "x"}})
        assert wrong.status == 400
        assert wrong.body["error"]["code"] == "answer_invalid"
        as_approval = dashboard.request("POST", path, {"approved": True})
        assert as_approval.body["error"]["code"] == "answer_invalid"
        both = dashboard.request("POST", path, {"approved": True, "values": {}})
        assert both.body["error"]["code"] == "invalid_request"
        still = dashboard.request("GET", f"/api/sessions/{session_id}").body["requests"]
        assert [r["id"] for r in still] == [request["id"]]
        answered = dashboard.request("POST", path, {"values": {"q1": "Rust", "q2": "parser"}})
        assert answered.status == 200, answered.body
        assert answered.body["state"] == "answered"
        assert answered.body["answer"] == {
            "values": {"q1": "Rust", "q2": "parser"},
            "by": "dashboard",
        }
        ended = events.until(live("turn_ended"))
    finally:
        events.close()
    assert ended["event"]["reason"] == "completed"
    items = dashboard.request("GET", f"/api/sessions/{session_id}/items?limit=500").body["items"]
    results = [
        i["message"] for i in items if i["kind"] == "message" and i["message"]["role"] == "tool"
    ]
    assert "Rust" in results[0]["content"][0]["text"]


def test_a_form_is_cancelled_by_id_and_the_call_ends_cancelled(dashboard: Server) -> None:
    reply = dashboard.request("POST", "/api/sessions", {"prompt": "ask me", "agent": "f"})
    assert reply.status == 202, reply.body
    session_id = reply.body["session_id"]
    events = dashboard.events(session_id, cursor="")
    try:
        asked = events.until(lambda e: e["type"] == "requests" and e["requests"])
        request = asked["requests"][0]
        assert request["kind"] == "interaction"
        path = f"/api/requests/{request['id']}/cancel"
        cancelled = dashboard.request("POST", path)
        assert cancelled.status == 200, cancelled.body
        assert (cancelled.body["state"], cancelled.body["answer"]) == ("cancelled", None)
        ended = events.until(live("turn_ended"))
    finally:
        events.close()
    assert ended["event"]["reason"] == "cancelled"  # a cancelled call ends its turn
    again = dashboard.request("POST", path)
    assert again.status == 409
    assert again.body["error"]["state"] == "cancelled"
    late = dashboard.request(
        "POST", f"/api/requests/{request['id']}", {"values": {"q1": "Rust", "q2": "parser"}}
    )
    assert late.body["error"]["code"] == "request_not_pending"
    unknown = dashboard.request("POST", "/api/requests/req_0/cancel")
    assert (unknown.status, unknown.body["error"]["code"]) == (404, "request_not_found")
    items = dashboard.request("GET", f"/api/sessions/{session_id}/items?limit=500").body["items"]
    results = [
        i["message"] for i in items if i["kind"] == "message" and i["message"]["role"] == "tool"
    ]
    assert results[0]["error_code"] == "cancelled"
    ends = [i for i in items if i["kind"] == "request" and i["state"] != "pending"]
    assert [i["state"] for i in ends] == ["cancelled"]
