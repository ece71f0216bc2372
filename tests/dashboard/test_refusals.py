"""What the dashboard refuses, over real HTTP on 127.0.0.1: input that is not what an
endpoint expects is a 400 with a stable code and the field, never a 500 or a traceback;
the token is checked before the Origin; unknown paths and wrong methods answer JSON; a
body is read no further than its limit."""

from __future__ import annotations

from typing import Any

from tests.dashboard.conftest import Server

LIMIT = 1 << 20


def refused(reply: Any, field: str) -> dict[str, Any]:
    """The error of a request refused as ``invalid_request`` at ``field``."""
    assert reply.status == 400, reply.body
    error: dict[str, Any] = reply.body["error"]
    assert (error["code"], error["field"]) == ("invalid_request", field), error
    return error


def stopped(server: Server, session_id: str) -> None:
    """Cancel the session's turn once it waits for its ask, and wait until it ended."""
    events = server.events(session_id, cursor="")
    try:
        events.until(lambda e: e["type"] == "requests" and e["requests"])
        server.request("POST", f"/api/sessions/{session_id}/cancel")
        events.until(lambda e: e["type"] == "status" and e["running"] is False)
    finally:
        events.close()


def test_a_write_without_the_token_is_unauthorized_whatever_its_origin(
    dashboard: Server,
) -> None:
    before = dashboard.request("GET", "/api/sessions").body["sessions"]
    for headers in ({}, {"Origin": "http://evil.example"}, {"Origin": dashboard.origin}):
        reply = dashboard.request(
            "POST", "/api/sessions", {"prompt": "hi"}, auth=False, headers=headers
        )
        assert reply.status == 401, headers
        assert reply.body["error"]["code"] == "unauthorized"
    assert dashboard.request("GET", "/api/sessions").body["sessions"] == before


def test_the_bearer_scheme_is_accepted_in_any_case(dashboard: Server) -> None:
    for scheme in ("Bearer", "bearer", "BEARER"):
        headers = {"Authorization": f"{scheme} {dashboard.token}"}
        reply = dashboard.request("GET", "/api/sessions", auth=False, headers=headers)
        assert reply.status == 200, scheme
        write = dashboard.request(
            "PUT", "/api/preferences", {"theme": "auto"}, auth=False, headers=headers
        )
        assert write.status == 200, (scheme, write.body)
    wrong = dashboard.request(
        "GET", "/api/sessions", auth=False, headers={"Authorization": "bearer nope"}
    )
    assert wrong.status == 401


def test_the_event_stream_opens_with_the_status_then_the_requests(dashboard: Server) -> None:
    reply = dashboard.request("POST", "/api/sessions", {"prompt": "state first"})
    session_id = reply.body["session_id"]
    stopped(dashboard, session_id)
    # From the first item on: the items after it are there to send at once, and still come
    # after the state (the order is the stream's own, not a race's outcome).
    cursor = dashboard.request("GET", f"/api/sessions/{session_id}/items?limit=1").body
    for _ in range(5):
        events = dashboard.events(session_id, cursor=cursor["next_cursor"])
        try:
            first, second, third = events.next(), events.next(), events.next()
        finally:
            events.close()
        assert (first["type"], first["running"]) == ("status", False)
        assert (second["type"], second["requests"]) == ("requests", [])
        assert third["type"] == "item"
