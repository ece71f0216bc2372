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
