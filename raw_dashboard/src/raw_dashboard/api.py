"""The dashboard's HTTP API: routes over the session service (``docs/dashboard.md``).

Each route parses what the browser sent, calls one app operation (through
:class:`~raw_dashboard.live.TurnRunner` for what runs in the background) and answers
JSON. An error is ``{"error": {"code", "message", "field"?}}``: a raw error keeps its own
code (``session_locked`` is 409, ``session_not_found`` 404...); a body or query that is
not what the route expects is 400 ``invalid_request`` naming the field (a body is read no
further than :data:`MAX_BODY`); a path no route has is 404 ``not_found``, a method its
route does not take 405 ``method_not_allowed`` (with ``Allow``). Nothing is changed by a
refused request.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from raw_core.errors import RawError, TurnInProgress
from raw_dashboard.prefs import Preferences, PreferencesInvalid
from raw_dashboard.stream import EventStream, request_json

if TYPE_CHECKING:
    from raw_core.app import App
    from raw_dashboard.live import Hub, TurnRunner

__all__ = ["HTTP_CODES", "MAX_BODY", "STATIC", "STATUS_OF", "application", "routes"]

STATIC = Path(__file__).parent / "static"

logger = logging.getLogger("raw_dashboard")

STATUS_OF: dict[str, int] = {
    "session_not_found": 404,
    "request_not_found": 404,
    "panel_unknown": 404,
    "session_expired": 410,
    "session_locked": 409,
    "turn_in_progress": 409,
    "request_not_pending": 409,
    "invalid_cursor": 400,
}
"""The HTTP status of a raw error's code; any other code is 400 (what was asked cannot
be done as asked), ``internal_error`` 500."""

_MAX_PAGE = 500
MAX_BODY = 1 << 20
"""The largest request body read, in bytes (1 MiB); a longer one is ``invalid_request``."""
_TOO_LARGE = f"the body must be at most {MAX_BODY:,} bytes (1 MiB)"


class Json(JSONResponse):
    """A JSON response that can carry any string raw keeps: a prompt may hold a lone
    surrogate (JSON allows ``"\\ud800"``), which UTF-8 cannot encode, so such a body is
    sent with its non-ASCII characters escaped."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, allow_nan=False, separators=(",", ":")).encode()


class Invalid(Exception):
    """A request body or query that is not what the route expects."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


def error_response(status: int, code: str, message: str, field: str | None = None) -> Response:
    error: dict[str, Any] = {"code": code, "message": message}
    if field is not None:
        error["field"] = field
    return Json({"error": error}, status_code=status)


def raw_error_response(error: RawError) -> Response:
    status = STATUS_OF.get(error.code, 500 if error.code == "internal_error" else 400)
    return Json({"error": error.to_dict()}, status_code=status)


async def _body(request: Request) -> dict[str, Any]:
    """The JSON object a write sent; at most :data:`MAX_BODY` bytes are read (a declared
    ``Content-Length`` over it is refused before any of the body is)."""
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > MAX_BODY:
        raise Invalid(_TOO_LARGE, "$")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise Invalid(_TOO_LARGE, "$")
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks) or b"{}")
    except ValueError:
        raise Invalid("the body must be JSON", "$") from None
    except RecursionError:
        raise Invalid(
            "the body nests too deeply: expected a JSON object a few levels deep", "$"
        ) from None
    if not isinstance(body, dict):
        raise Invalid("the body must be a JSON object", "$")
    return body


def _text(body: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = body.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise Invalid(f"{key} must be a non-empty string", f"$.{key}")
    return value


def _limit(request: Request) -> int:
    given = request.query_params.get("limit", "100")
    # ASCII digits only: str.isdigit() also takes "²", which int() refuses.
    if not (given.isascii() and given.isdigit() and len(given) <= 6) or not (
        1 <= int(given) <= _MAX_PAGE
    ):
        raise Invalid(f"limit must be a whole number from 1 to {_MAX_PAGE}", "limit")
    return int(given)


async def _cwd(body: dict[str, Any]) -> str | None:
    """The ``cwd`` a new session's tools run in: an absolute path to a directory (as
    ``raw acp`` requires), never resolved against the server's own folder."""
    cwd = _text(body, "cwd", required=False)
    if cwd is None:
        return None
    shown = json.dumps(cwd)
    if not os.path.isabs(cwd):
        raise Invalid(f"cwd must be an absolute path, not {shown}", "$.cwd")
    try:
        found = await anyio.Path(cwd).is_dir()
    except (OSError, ValueError):  # a NUL or a lone surrogate: no such folder
        found = False
    if not found:
        raise Invalid(f"cwd {shown} is not an existing directory", "$.cwd")
    return cwd


def session_json(info: Any, running: bool) -> dict[str, Any]:
    return {
        "id": info.id,
        "title": info.title,
        "cwd": info.cwd,
        "created_at": info.created_at.isoformat(),
        "last_activity": info.last_activity.isoformat(),
        "running": running,
    }


def routes(app: App, hub: Hub, runner: TurnRunner, prefs: Preferences) -> list[Any]:
    """The routes of the dashboard, bound to one app, hub, runner and preferences file."""

    def handled(handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            try:
                return await handler(request)  # type: ignore[no-any-return]
            except Invalid as error:
                return error_response(400, "invalid_request", str(error), error.field)
            except PreferencesInvalid as error:
                return error_response(400, "invalid_request", str(error), error.field)
            except RawError as error:
                return raw_error_response(error)
            except Exception:  # a bug: logged, and the browser gets JSON, not a traceback
                logger.exception("the dashboard failed to answer %s", request.url.path)
                return error_response(500, "internal_error", "the dashboard failed unexpectedly")

        return endpoint

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"cache-control": "no-store"})

    async def list_sessions(request: Request) -> Response:
        found = await app.list_sessions(limit=_limit(request))
        return Json({"sessions": [session_json(s, runner.running(s.id)) for s in found]})

    async def start_session(request: Request) -> Response:
        body = await _body(request)
        prompt = _text(body, "prompt")
        assert prompt is not None
        cwd = await _cwd(body)
        session_id = await runner.start(
            None, prompt, cwd=cwd, agent=_text(body, "agent", required=False)
        )
        return Json({"session_id": session_id}, status_code=202)

    async def show_session(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        info = await app.session_info(session_id)
        panels = await app.panels(session_id)
        pending = await app.pending_requests(session_id)
        return Json(
            {
                **session_json(info, runner.running(session_id)),
                "panels": [update.to_dict() for update in panels if not update.closed],
                "requests": [request_json(r) for r in pending],
                "tail_cursor": await app.tail_cursor(session_id),
            }
        )

    async def items(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        order = request.query_params.get("order", "oldest")
        if order not in ("oldest", "newest"):
            raise Invalid("order must be oldest or newest", "order")
        page = await app.page(
            session_id,
            request.query_params.get("cursor") or None,
            limit=_limit(request),
            newest_first=order == "newest",
        )
        return Json(
            {
                "items": [item.to_dict() for item in page.items],
                "next_cursor": page.next_cursor,
                "has_more": page.has_more,
            }
        )

    async def events(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        await app.session_info(session_id)  # session_not_found before the stream starts
        cursor = request.query_params.get("cursor") or await app.tail_cursor(session_id)
        await app.page(session_id, cursor, limit=1)  # invalid_cursor before it starts
        stream = EventStream(app, hub, runner, session_id, cursor)
        return stream  # type: ignore[return-value]  # an ASGI app, as Starlette allows

    async def start_turn(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        body = await _body(request)
        prompt = _text(body, "prompt")
        assert prompt is not None
        if runner.running(session_id):
            raise TurnInProgress("a turn of this session is running in the dashboard")
        await runner.start(session_id, prompt)
        return Json({"session_id": session_id}, status_code=202)

    async def cancel(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        return Json({"cancelled": app.cancel(session_id, "cancelled in the dashboard")})

    async def answer(request: Request) -> Response:
        body = await _body(request)
        approved = body.get("approved")
        values = body.get("values")
        if approved is not None and not isinstance(approved, bool):
            raise Invalid("approved must be true or false", "$.approved")
        if values is not None and not isinstance(values, dict):
            raise Invalid("values must be an object of the form's values", "$.values")
        if (approved is None) == (values is None):
            raise Invalid(
                "expected approved (for an approval) or values (for a form), not both", "$"
            )
        message = _text(body, "message", required=False)
        answered = await app.answer_request(
            request.path_params["request_id"],
            by="dashboard",
            approved=approved,
            values=values,
            message=message or None,
        )
        return Json(request_json(answered))

    async def cancel_request(request: Request) -> Response:
        cancelled = await app.cancel_request(request.path_params["request_id"], by="dashboard")
        return Json(request_json(cancelled))

    async def panels(request: Request) -> Response:
        found = await app.panels(request.path_params["session_id"])
        return Json({"panels": [u.to_dict() for u in found if not u.closed]})

    async def panel_action(request: Request) -> Response:
        result = await runner.panel_action(
            request.path_params["session_id"],
            request.path_params["panel"],
            request.path_params["action"],
        )
        return Json(result.to_dict())

    async def get_prefs(request: Request) -> Response:
        return Json(prefs.read())

    async def put_prefs(request: Request) -> Response:
        return Json(prefs.update(await _body(request)))

    def by_method(**handlers: Any) -> Any:
        """One route's endpoint for several methods (so a wrong method's 405 lists all of
        the path's methods in ``Allow``); HEAD is answered as GET."""

        async def endpoint(request: Request) -> Response:
            method = "GET" if request.method == "HEAD" else request.method
            return await handlers[method](request)  # type: ignore[no-any-return]

        return endpoint

    session = "/api/sessions/{session_id}"
    return [
        Route("/", handled(index), methods=["GET"]),
        Route(
            "/api/sessions",
            handled(by_method(GET=list_sessions, POST=start_session)),
            methods=["GET", "POST"],
        ),
        Route(session, handled(show_session), methods=["GET"]),
        Route(session + "/items", handled(items), methods=["GET"]),
        Route(session + "/events", handled(events), methods=["GET"]),
        Route(session + "/turns", handled(start_turn), methods=["POST"]),
        Route(session + "/cancel", handled(cancel), methods=["POST"]),
        Route(session + "/panels", handled(panels), methods=["GET"]),
        Route(
            session + "/panels/{panel:path}/actions/{action}",
            handled(panel_action),
            methods=["POST"],
        ),
        Route("/api/requests/{request_id}", handled(answer), methods=["POST"]),
        Route("/api/requests/{request_id}/cancel", handled(cancel_request), methods=["POST"]),
        Route(
            "/api/preferences",
            handled(by_method(GET=get_prefs, PUT=put_prefs)),
            methods=["GET", "PUT"],
        ),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]


HTTP_CODES: dict[int, tuple[str, str]] = {
    404: ("not_found", "no endpoint has this path"),
    405: ("method_not_allowed", "this endpoint does not take this method (see Allow)"),
}
"""The code and message of an error the routing itself answers (an unknown path, a
method the path does not take); any other status is ``invalid_request``."""


async def http_error(request: Request, error: Exception) -> Response:
    """Starlette's own HTTP errors (no route, wrong method, a static file that is none) as
    the API's JSON error, keeping their headers (``Allow`` on a 405)."""
    assert isinstance(error, HTTPException)
    code, message = HTTP_CODES.get(error.status_code, ("invalid_request", error.detail))
    response = error_response(error.status_code, code, message)
    response.headers.update(error.headers or {})
    return response


def application(app: App, hub: Hub, runner: TurnRunner, prefs: Preferences) -> Starlette:
    """The dashboard's ASGI application: :func:`routes`, every error as JSON."""
    return Starlette(
        routes=routes(app, hub, runner, prefs), exception_handlers={HTTPException: http_error}
    )
