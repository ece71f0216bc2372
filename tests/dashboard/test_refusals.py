"""What the dashboard refuses, over real HTTP on 127.0.0.1: input that is not what an
endpoint expects is a 400 with a stable code and the field, never a 500 or a traceback;
the token is checked before the Origin; unknown paths and wrong methods answer JSON; a
body is read no further than its limit."""

from __future__ import annotations

import socket
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


def test_a_limit_of_digits_that_are_not_ascii_is_invalid(dashboard: Server) -> None:
    # "²".isdigit() is True, and int("²") fails: ASCII digits only.
    for limit in ("%C2%B2", "%D9%A3", "9" * 5000, "-1", "1.5"):
        reply = dashboard.request("GET", "/api/sessions?limit=" + limit)
        refused(reply, "limit")
        page = dashboard.request("GET", "/api/sessions/nope/items?limit=" + limit)
        assert page.status in (400, 404), page.body


def test_a_body_nested_too_deeply_is_invalid_not_a_crash(dashboard: Server) -> None:
    deep = b"[" * 100_000
    for method, path in (("POST", "/api/sessions"), ("PUT", "/api/preferences")):
        error = refused(dashboard.request(method, path, data=deep), "$")
        assert "deep" in error["message"]


def test_a_first_prompt_with_a_lone_surrogate_titles_its_session(dashboard: Server) -> None:
    reply = dashboard.request("POST", "/api/sessions", {"prompt": "fix \ud800 this"})
    assert reply.status == 202, reply.body
    session_id = reply.body["session_id"]
    stopped(dashboard, session_id)
    shown = dashboard.request("GET", f"/api/sessions/{session_id}").body
    assert shown["title"] == "fix \ufffd this"
    listed = dashboard.request("GET", "/api/sessions").body["sessions"]
    assert listed[0]["title"] == "fix \ufffd this"
    # The prompt itself is kept as sent, and shown (JSON escapes the surrogate).
    page = dashboard.request("GET", f"/api/sessions/{session_id}/items?limit=500")
    assert page.status == 200, page.body
    prompt = page.body["items"][0]["message"]
    assert prompt["content"][0]["text"] == "fix \ud800 this"


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


def test_unknown_paths_and_wrong_methods_answer_json(dashboard: Server) -> None:
    for path in ("/api/nope", "/api/sessions/x/nope", "/static/nope.js"):
        reply = dashboard.request("GET", path)
        assert reply.status == 404, path
        assert reply.body["error"]["code"] == "not_found", path
    cases = [
        ("DELETE", "/api/sessions", {"GET", "POST"}),
        ("PUT", "/api/sessions/x/turns", {"POST"}),
        ("PATCH", "/api/preferences", {"GET", "PUT"}),
        ("POST", "/api/sessions/x/items", {"GET"}),
    ]
    for method, path, allowed in cases:
        reply = dashboard.request(method, path)
        assert reply.status == 405, (method, path)
        assert reply.body["error"]["code"] == "method_not_allowed", (method, path)
        assert set(reply.headers["allow"].split(", ")) - {"HEAD"} == allowed, (method, path)


def raw_request(server: Server, head: str, body: bytes) -> bytes:
    """Send ``head`` (the request line and headers) and ``body``, never finishing the
    body; the response, read until the server closes or 10 s pass."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
        connection.sendall(head.encode() + b"\r\n" + body)
        received = b""
        while b"\r\n\r\n" not in received or b'"error"' not in received:
            chunk = connection.recv(65536)
            if not chunk:
                break
            received += chunk
        return received


def headers(server: Server, **extra: str) -> str:
    lines = [
        "PUT /api/preferences HTTP/1.1",
        f"Host: 127.0.0.1:{server.port}",
        f"Cookie: raw_dashboard={server.token}",
        f"Origin: {server.origin}",
        "Content-Type: application/json",
        *(f"{name.replace('_', '-')}: {value}" for name, value in extra.items()),
    ]
    return "\r\n".join(lines) + "\r\n"


def test_a_body_over_the_limit_is_refused_before_it_is_all_read(dashboard: Server) -> None:
    # The declared length is over the limit: refused before any of the body is sent.
    declared = raw_request(dashboard, headers(dashboard, Content_Length=str(LIMIT + 1)), b"")
    assert declared.startswith(b"HTTP/1.1 400"), declared[:200]
    assert b"invalid_request" in declared
    # No length declared (chunked): refused once past the limit, the rest never sent.
    chunk = b"%x\r\n%s\r\n" % (LIMIT + 1, b" " * (LIMIT + 1))
    streamed = raw_request(dashboard, headers(dashboard, Transfer_Encoding="chunked"), chunk)
    assert streamed.startswith(b"HTTP/1.1 400"), streamed[:200]
    assert b"invalid_request" in streamed
    at_limit = dashboard.request("PUT", "/api/preferences", data=b" " * (LIMIT - 2) + b"{}")
    assert at_limit.status == 200, at_limit.body


def test_a_cwd_that_is_relative_or_no_directory_is_refused(dashboard: Server) -> None:
    before = dashboard.request("GET", "/api/sessions").body["sessions"]
    for cwd in (".", "project", str(dashboard.root / "nope"), str(dashboard.root / "raw.json")):
        reply = dashboard.request("POST", "/api/sessions", {"prompt": "hi", "cwd": cwd})
        refused(reply, "$.cwd")
    for cwd in ("/tmp/\ud800", "/tmp/a\x00b"):
        refused(dashboard.request("POST", "/api/sessions", {"prompt": "hi", "cwd": cwd}), "$.cwd")
    assert dashboard.request("GET", "/api/sessions").body["sessions"] == before


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
