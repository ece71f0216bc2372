"""docs/dashboard.md documents every endpoint the dashboard serves, and the policy it sends."""

from __future__ import annotations

import re
from pathlib import Path

from raw_dashboard import CONTENT_SECURITY_POLICY

PAGE = Path(__file__).parents[2] / "docs" / "dashboard.md"


def shape(method: str, path: str) -> str:
    """``METHOD path`` with each path parameter as ``{}`` (names differ: ``{id}``)."""
    return f"{method} " + re.sub(r"\{[^}]*\}", "{}", path)


def served() -> set[str]:
    """``METHOD path`` of every route, read from the routes the server builds."""
    from starlette.routing import Mount, Route

    from raw_dashboard.api import routes
    from raw_dashboard.prefs import Preferences

    found = set()
    for route in routes(None, None, None, Preferences(Path("unused.json"))):  # type: ignore[arg-type]
        if isinstance(route, Mount):
            found.add(shape("GET", route.path + "/{path}"))
        elif isinstance(route, Route):
            for method in sorted((route.methods or set()) - {"HEAD"}):
                found.add(shape(method, route.path))
    return found


def documented() -> set[str]:
    text = PAGE.read_text(encoding="utf-8")
    found = set()
    for heading in re.findall(r"^### (.+)$", text, flags=re.M):
        for part in heading.split(","):
            method, path = part.strip().strip("`").split(" ", 1)
            found.add(shape(method, path.split("?")[0]))
    return found


def test_every_endpoint_has_a_section_and_every_section_an_endpoint() -> None:
    assert documented() == served()


def test_the_page_prints_the_policy_the_server_sends() -> None:
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert CONTENT_SECURITY_POLICY in text
