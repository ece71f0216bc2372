"""Compaction: replacing the oldest part of a session's model context with a summary.

When the next request would pass the threshold of the model's context window
(:class:`~raw_core.runtime.context.ContextLimits`), when the provider refuses a request as too
long, or when the user asks (``raw sessions compact ID``), raw asks the session's own model for
a summary of the oldest part of the model context and stores it in the session in place of
those messages (spec 004, "Sessions and storage"); the display history is untouched.

* **What is kept**: the most recent messages, up to :data:`KEEP_SHARE` of the window or of
  the context's own estimate, whichever is smaller, stay verbatim — at least the last
  step. The boundary never falls between a tool call and its results: the first kept message
  is a user or an assistant message.
* **The summary request** is the session's own request — the same system prompt, tools and
  prompt-cache key, the replaced messages as they were sent — followed by
  :data:`SUMMARY_PROMPT`, so its prefix is one the provider may have cached. A variable's
  value is not sent in it (the placeholder is named instead), so a summary never holds one.
  The reply's text is the summary (cut past :data:`MAX_SUMMARY_BYTES`); a reply without text
  fails the compaction.
* **Summary panels**: each open panel declared ``context: "summary"`` adds one reminder to
  the summary message, built from its last revision (for a checklist: its open items), at
  most :data:`MAX_REMINDER_BYTES` bytes each.
* **All or nothing**: a compaction that fails (a provider error, a cancellation) writes
  nothing; once the summary is in hand it is stored in one write, shielded from cancellation.

The request prefix changes once, at the compaction; the prompt-cache key (a hash of the
system prompt and the tools) does not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

import anyio
import attrs

from raw_core.errors import (
    Cancelled,
    ContextTooLong,
    InternalError,
    ProviderError,
    ProviderFailed,
    RawError,
)
from raw_core.providers.contract import ModelRequest, ModelTool, Provider
from raw_core.runtime._transcript import Draft
from raw_core.runtime.context import ContextLimits, ContextMeter, message_bytes
from raw_core.runtime.events import (
    CompactionEnded,
    CompactionReason,
    CompactionStarted,
    LoopEvent,
)
from raw_core.sessions.backend import PanelUpdate, SessionWriter
from raw_core.sessions.blocks import TextBlock, VarPlaceholder
from raw_core.sessions.messages import Message, ToolResultMessage, UserMessage
from raw_core.tools.calls import CancellationSignal

__all__ = [
    "KEEP_SHARE",
    "MAX_REMINDER_BYTES",
    "MAX_SUMMARY_BYTES",
    "SUMMARY_HEADER",
    "SUMMARY_PROMPT",
    "Compactor",
    "boundary",
    "panel_reminders",
]

SUMMARY_PROMPT: Final = (
    "[raw] The conversation above is about to be replaced by a summary, to fit the model's"
    " context window; the most recent messages after it are kept as they are. Write that"
    " summary now, for yourself to continue the work from. Include: the user's requests and"
    " goals in their own words where they matter; decisions made and why; the files, commands"
    " and names involved; what has been done, what failed and what is still open; anything"
    " the user asked you to remember. Leave out what no longer matters. Answer with the"
    " summary as plain text only: do not call any tool."
)
"""What raw asks the model, after the messages to be summarized."""

SUMMARY_HEADER: Final = (
    "[raw] The earlier part of this conversation was compacted to fit the context window."
    " Summary of it:"
)
"""The first line of a stored summary."""

KEEP_SHARE: Final = 0.25
MAX_SUMMARY_BYTES: Final = 32 * 1024
MAX_REMINDER_BYTES: Final = 2048
_CUT = "\n[raw: cut here]"


def is_summary(message: Message) -> bool:
    """Whether ``message`` is a summary raw stored at a compaction."""
    return (
        isinstance(message, UserMessage)
        and bool(message.content)
        and isinstance(message.content[0], TextBlock)
        and message.content[0].text.startswith(SUMMARY_HEADER)
    )


def boundary(context: Sequence[Message], keep_bytes: int) -> int | None:
    """How many leading messages of ``context`` a compaction replaces (``replace_first``):
    the fewest that leave at most ``keep_bytes`` verbatim, never splitting a tool call from
    its results, and always at least the last step's. None when nothing can be replaced
    (no boundary, or only an earlier summary before it)."""
    kept = 0
    best: int | None = None
    for index in range(len(context) - 1, 0, -1):
        kept += message_bytes(context[index])
        if isinstance(context[index], ToolResultMessage):
            continue
        if best is None or kept <= keep_bytes:
            best = index
        if kept > keep_bytes:
            break
    if best is None or (best == 1 and is_summary(context[0])):
        return None
    return best


def _cut(text: str, limit: int) -> str:
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    return data[: limit - len(_CUT)].decode("utf-8", "ignore") + _CUT


def _checklist_lines(block: dict[str, Any]) -> list[str]:
    items = [i for i in block.get("items", ()) if isinstance(i, dict)]
    open_items = [i for i in items if i.get("status") != "done"]
    if not open_items:
        return [f"(all {len(items)} items are done)"]
    done = len(items) - len(open_items)
    lines = [f"- [{i.get('status', 'pending')}] {i.get('text', '')}" for i in open_items]
    return [*lines, f"({done} done item{'s' if done != 1 else ''} not shown)"] if done else lines


def panel_reminder(update: PanelUpdate) -> str | None:
    """The reminder a ``context: "summary"`` panel sends after a compaction, from its last
    revision; None for another panel or a closed one."""
    declaration = update.declaration or {}
    if declaration.get("context") != "summary" or update.document_text is None:
        return None
    title = declaration.get("title") or update.panel
    lines = [
        f'[raw] The panel "{title}" ({update.identity}:{update.panel}) stands at revision'
        f" {update.revision}:"
    ]
    document = update.document
    blocks = document.get("blocks", ()) if isinstance(document, dict) else ()
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "checklist":
            lines += _checklist_lines(block)
        elif kind == "text":
            lines.append(str(block.get("text", "")))
        else:
            lines.append(f"(a {kind} block, not shown)")
    return _cut("\n".join(lines), MAX_REMINDER_BYTES)


def panel_reminders(panels: Iterable[PanelUpdate]) -> list[str]:
    """One reminder per open ``context: "summary"`` panel, in the board's order."""
    return [text for text in map(panel_reminder, panels) if text is not None]


def _without_values(message: Message) -> Message:
    """``message`` with each variable placeholder named instead of filled in."""
    if not isinstance(message, ToolResultMessage) or not any(
        isinstance(b, VarPlaceholder) for b in message.content
    ):
        return message
    content = tuple(
        TextBlock(text=f"[the value of the variable {b.name}, not shown here]")
        if isinstance(b, VarPlaceholder)
        else b
        for b in message.content
    )
    return attrs.evolve(message, content=content)


def _ignore(event: LoopEvent) -> None:
    """Summary text is not shown as it streams."""


@attrs.define(kw_only=True)
class Compactor:
    """Compacts one open session: measures it before each request and, past the
    threshold, replaces the oldest part of its context with a summary. The session gives
    it its context (``get_context``) and takes the new one (``set_context``)."""

    session_id: str
    provider: Provider
    system: str | None
    tools: tuple[ModelTool, ...]
    cache_key: str
    writer: SessionWriter
    meter: ContextMeter
    limits: ContextLimits
    panels: Callable[[], Iterable[PanelUpdate]]
    get_context: Callable[[], Sequence[Message]]
    set_context: Callable[[Sequence[Message]], None]

    async def fit(
        self,
        signal: CancellationSignal,
        scope: anyio.CancelScope,
        emit: Callable[[LoopEvent], None],
    ) -> None:
        """Before a request: compact when it would pass the threshold. A request that
        still would not fit the window is ``context_too_long``; a failed compaction ends
        the turn only when the request would not fit without it."""
        budget = self.limits.budget
        if budget is None or self.meter.estimate() <= budget:
            return
        window = self.limits.window
        assert window is not None

        def quiet(event: LoopEvent) -> None:  # no "nothing to compact" before each request
            if not (isinstance(event, CompactionEnded) and event.outcome == "nothing_to_compact"):
                emit(event)

        try:
            await self.compact("threshold", signal, scope, quiet)
        except ProviderError:
            if self.meter.estimate() > window:
                raise
        estimate = self.meter.estimate()
        if estimate > window:
            raise ContextTooLong(
                f"the next request holds about {estimate:,} tokens, more than the model's"
                f" context window of {window:,}, even after compacting the session",
                estimated_tokens=estimate,
                context_window=window,
            )

    async def compact(
        self,
        reason: CompactionReason,
        signal: CancellationSignal,
        scope: anyio.CancelScope,
        emit: Callable[[LoopEvent], None],
    ) -> CompactionEnded:
        """Compact now: the ``compaction_started`` and ``compaction_ended`` events, the
        summary request, the one write. A provider error is raised after its
        ``compaction_ended`` (``failed``); a cancellation too (``cancelled``); either way
        nothing changed."""
        context = tuple(self.get_context())
        estimate = self.meter.estimate()
        window = self.limits.window
        keep_tokens = KEEP_SHARE * min(window if window is not None else estimate, estimate)
        replace = boundary(context, int(keep_tokens / self.meter.rate))
        if replace is None:
            ended = CompactionEnded(session_id=self.session_id, outcome="nothing_to_compact")
            emit(ended)
            return ended
        emit(
            CompactionStarted(
                session_id=self.session_id,
                reason=reason,
                estimated_tokens=estimate,
                context_window=window,
                messages=replace,
            )
        )
        try:
            text = await self._summarize(context[:replace], signal, scope)
        except ProviderError as exc:
            emit(self._failed("failed", exc))
            raise
        except Cancelled as exc:
            emit(self._failed("cancelled", exc))
            raise
        except Exception as exc:  # a fault of raw or a plug-in: still an end event
            emit(self._failed("failed", InternalError(f"{type(exc).__name__}: {exc}")))
            raise
        except BaseException:  # the turn's scope was cancelled, or the task
            emit(self._failed("cancelled", Cancelled("the compaction was cancelled")))
            raise
        reminders = panel_reminders(self.panels())
        summary = UserMessage(
            content=(
                TextBlock(text=f"{SUMMARY_HEADER}\n\n{text}"),
                *(TextBlock(text=r) for r in reminders),
            )
        )
        new_context = (summary, *context[replace:])
        with anyio.CancelScope(shield=True):
            await self.writer.compact(summary, replace_first=replace)
            self.set_context(new_context)
            self.meter.reset(new_context)
        ended = CompactionEnded(
            session_id=self.session_id,
            outcome="completed",
            replaced=replace,
            kept=len(context) - replace,
            estimated_tokens=self.meter.estimate(),
            reminders=len(reminders),
        )
        emit(ended)
        return ended

    def _failed(self, outcome: Any, error: RawError) -> CompactionEnded:
        return CompactionEnded(session_id=self.session_id, outcome=outcome, error=error.to_dict())

    async def _summarize(
        self, messages: Sequence[Message], signal: CancellationSignal, scope: anyio.CancelScope
    ) -> str:
        """The model's summary of ``messages`` (the session's request, then the prompt)."""
        request = ModelRequest(
            system=self.system,
            tools=self.tools,
            messages=(*map(_without_values, messages), UserMessage.from_text(SUMMARY_PROMPT)),
            cache_key=self.cache_key,
        )
        draft = Draft()
        stream: Any = None
        signal.attach(scope)
        try:
            if signal.cancelled:
                raise Cancelled("the compaction was cancelled")
            stream = self.provider.stream(request)
            async for event in stream:
                draft.take(event, 0, _ignore, False)
        except (ProviderError, Cancelled):
            raise
        except Exception as exc:
            raise ProviderFailed(
                f"the provider failed: {type(exc).__name__}: {exc}", provider=self.provider.name
            ) from exc
        finally:
            signal.detach(scope)
            close = getattr(stream, "aclose", None)
            if close is not None:
                with anyio.CancelScope(shield=True):
                    await close()
        text = draft.message(0).text.strip()
        if not text:
            raise ProviderFailed(
                "the model answered the compaction's request without a summary",
                provider=self.provider.name,
            )
        return _cut(text, MAX_SUMMARY_BYTES)
