"""The dashboard in a real headless Chromium (Debian's ``chromium``, driven by playwright
for Python): open the printed URL, start a turn of the replay model, watch it, approve an
ask, see the todo panel and the mermaid diagram, reload while an ask waits and answer it
after, run panel actions, keep preferences. One browser for the session; each test saves a
screenshot in its temporary folder when it fails."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import missing_prerequisite
from tests.dashboard.conftest import Server
from tests.dashboard.project import FINAL_TEXT

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = Path(__file__).parents[2] / "docs" / "dashboard.png"
"""The screenshot of docs/dashboard.md, written when RAW_DOCS_SCREENSHOT=1."""

TIMEOUT = 30_000  # ms: every wait for the page is bounded by it


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for this module, which holds every browser test: it is started once per
    test session. Not session-scoped: while playwright's synchronous driver runs, this
    thread counts as running an event loop, so no later test could start its own."""
    if not CHROMIUM.exists():
        missing_prerequisite(f"{CHROMIUM} is missing (Debian's chromium; .ci/run installs it)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing_prerequisite("playwright for Python is not installed")
    with sync_playwright() as driver:
        launched = driver.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
                "--disable-sync",
            ],
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    opened = context.new_page()
    opened.set_default_timeout(TIMEOUT)
    problems: list[str] = []
    opened.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    opened.on("pageerror", lambda error: problems.append(str(error)))
    opened.problems = problems
    try:
        yield opened
        assert problems == [], problems  # no CSP violation, no script error
    finally:
        failed = getattr(request.node, "report_call", None)
        if failed is not None and failed.failed:
            opened.screenshot(path=str(tmp_path / "failure.png"), full_page=True)
        context.close()


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def open_dashboard(page: Any, dashboard: Server) -> None:
    page.goto(dashboard.url)
    assert page.url == dashboard.origin + "/"  # the token left the address bar
    page.wait_for_selector("body[data-ready=true]")


def start_turn(page: Any, prompt: str) -> None:
    page.click("#new-session")
    page.fill("#prompt", prompt)
    page.click("#send")
    page.wait_for_selector(".request button.approve")


def test_a_turn_with_an_approval_a_todo_panel_and_a_diagram(page: Any, dashboard: Server) -> None:
    open_dashboard(page, dashboard)
    start_turn(page, "Draw the flow and clean up")
    card = page.locator(".request")
    assert "builtin/bash asks for approval" in card.inner_text()
    assert '"rm"' in card.locator("pre").first.inner_text()  # the effects, apart
    # The todo panel is in the side panel, the diagram inline, before the answer.
    todo = page.locator("#panels [data-panel='builtin/todo:todo']")
    todo.locator("li[data-status=in_progress]").wait_for()
    assert "draw the flow" in todo.inner_text()
    flow = page.locator("#log [data-panel='agent/diagram:flow']")
    flow.locator(".mermaid-diagram svg").wait_for()
    assert "tests pass?" in flow.inner_text()
    card.locator("button.approve").click()
    page.locator(".turn-end[data-reason=completed]").wait_for()
    # Committed items come from the store, beside the live events: wait for them too.
    expect(page.locator("#log .msg.assistant:not(.draft)").last).to_contain_text(FINAL_TEXT)
    expect(page.locator(".approval.state-approved")).to_have_count(1)
    expect(page.locator(".request")).to_have_count(0)
    if os.environ.get("RAW_DOCS_SCREENSHOT") == "1":
        page.screenshot(path=str(SCREENSHOT))
    # Panel actions: a tool action reruns the tool, a prompt action drafts a message.
    flow = page.locator("#log [data-panel='agent/diagram:flow']").last
    flow.locator("button[data-action=explain]").click()
    expect(page.locator("#prompt")).to_have_value("Explain the flow.")
    flow.locator("button[data-action=redraw]").click()
    page.locator("#log [data-panel='agent/diagram:flow'] .mermaid-diagram").filter(
        has_text="redrawn"
    ).wait_for()


def test_an_ask_survives_a_reload_and_is_answered_after_it(page: Any, dashboard: Server) -> None:
    open_dashboard(page, dashboard)
    page.select_option("#pref-theme", "dark")
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    start_turn(page, "Ask me after a reload")
    session_url = page.url
    assert "#" in session_url
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    # Still waiting: the request is stored, not held by the page that went away.
    card = page.locator(".request")
    card.locator("button.deny").wait_for()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    card.locator("input.deny-message").fill("not now")
    card.locator("button.deny").click()
    page.locator(".turn-end[data-reason=completed]").wait_for()
    denied = page.locator(".approval.state-denied")
    denied.wait_for()
    assert "denied by dashboard: not now" in denied.inner_text()
    page.select_option("#pref-theme", "auto")
    expect(page.locator("html")).to_have_attribute("data-theme", "auto")


def test_a_form_survives_a_reload_and_is_answered_after_it(page: Any, dashboard: Server) -> None:
    open_dashboard(page, dashboard)
    started = page.request.post(
        dashboard.origin + "/api/sessions",
        data={"prompt": "Ask me something", "agent": "f"},
        headers={"Origin": dashboard.origin},
    )
    assert started.status == 202, started.text()
    session_id = started.json()["session_id"]
    page.goto(f"{dashboard.origin}/#{session_id}")
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    form = page.locator(".form-request form")
    form.wait_for()
    page.reload()  # the form waits in the store, not in the page
    page.wait_for_selector("body[data-ready=true]")
    form = page.locator(".form-request form")
    form.locator("select[name=q1]").select_option("Rust")
    form.locator("input[name=q2]").fill("parser")
    # The event stream's list of requests arriving after the typing keeps what was typed.
    page.wait_for_selector("body[data-synced=true]")
    expect(form.locator("input[name=q2]")).to_have_value("parser")
    form.locator("button[type=submit]").click()
    page.locator(".turn-end[data-reason=completed]").wait_for()
    answered = page.locator(".answered-form.state-answered")
    answered.wait_for()
    assert "answered by dashboard" in answered.inner_text()
    assert "parser" in answered.inner_text()
    expect(page.locator(".form-request")).to_have_count(0)
    # A second form, cancelled by its Cancel button: the call and so the turn end cancelled.
    again = page.request.post(
        dashboard.origin + "/api/sessions",
        data={"prompt": "Ask me again", "agent": "f"},
        headers={"Origin": dashboard.origin},
    )
    assert again.status == 202, again.text()
    page.goto(f"{dashboard.origin}/#{again.json()['session_id']}")
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.wait_for_selector("body[data-synced=true]")
    page.locator(".form-request form button.cancel-form").click()
    page.locator(".answered-form.state-cancelled").wait_for()  # read back from the store
    expect(page.locator(".form-request")).to_have_count(0)
