"""Panels (``raw.panel/2``): the panels of a session, and what one tool call may do with
them.

A panel is a live view a tool keeps up to date; its state never goes to the model, which
reads one short confirmation line per updated panel (:func:`panel_notes`). A tool updates
a panel in one of two ways, which end in the same place:

* a **result block** ``{"type": "panel", "panel": "<id>", "op": ..., ...}`` next to its
  content, taken out of the result before middlewares, the cap, providers and the history
  see it (:meth:`CallPanels.take_blocks`); a rejected one never fails the call;
* **``await context.panels.update(panel, body)``** while the handler runs, which returns the
  new revision or raises the panel error (:class:`CallPanels`); ``context.panels.get(panel)``
  reads the last revision and document.

A :class:`PanelBoard` holds one session's panels — at most :data:`MAX_SESSION_PANELS`, keyed
by tool identity and panel id, each at its last accepted :class:`PanelUpdate` — and hands
every update, accepted or rejected, to its :class:`PanelRecorder` (the session stores it
as a display-only item and shows it to the front end). A board without a recorder keeps
its panels in memory only (``raw tools call``).

A call names one of its own panels by id (``"todo"``) or by its full name
``<identity>:<id>`` (``"builtin/todo:todo"``); a full name of another tool's panel is
``panel_not_owned``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Protocol

import anyio
import attrs

from raw_core.errors import (
    PanelClosedContext,
    PanelError,
    PanelInvalid,
    PanelLimit,
    PanelNotOwned,
    PanelRateLimited,
    PanelRevisionConflict,
    PanelUndeclared,
    PanelUnknown,
)
from raw_core.frozen import freeze
from raw_core.sessions.records import PanelKey, PanelSource, PanelUpdate
from raw_core.tools.manifest import PanelDeclaration
from raw_core.tools.panel_updates import (
    checked_body,
    patched_text,
    split_name,
)

__all__ = [
    "MAX_RECORDED_REJECTIONS",
    "MAX_SESSION_PANELS",
    "MAX_UPDATES_PER_CALL",
    "CallPanels",
    "PanelBoard",
    "PanelRecorder",
    "PanelView",
    "has_panel_blocks",
    "panel_notes",
    "split_name",
]

MAX_SESSION_PANELS: Final = 16
MAX_UPDATES_PER_CALL: Final = 200
"""Updates of one panel in one call, rejected ones included."""
MAX_RECORDED_REJECTIONS: Final = 200
"""Rejected updates of one call that are stored and reported; later ones are only raised
(or, in a result block, counted in the model's note)."""
MAX_REJECTION_LINES: Final = 16


class PanelRecorder(Protocol):
    """Where a board's updates go (the session: its display history and front end)."""

    async def record(self, update: PanelUpdate, panels: tuple[PanelKey, ...] | None) -> None:
        """Store and show ``update`` (accepted or rejected). ``panels`` is the session's
        new set of panels when this update opens a panel or evicts one (store it first),
        ``None`` otherwise. A :class:`~raw_core.errors.RawError` refuses the update."""
        ...


@attrs.frozen(kw_only=True)
class PanelView:
    """What ``context.panels.get(panel)`` returns: the last revision, its document (frozen;
    ``None`` once closed) and whether the panel is closed."""

    revision: int
    document: Any
    closed: bool


class PanelBoard:
    """One session's panels: at most :data:`MAX_SESSION_PANELS`, keyed by ``(identity,
    panel id)``, each at its last accepted update (``restored``: those of a resumed
    session, least recently changed first). Updates are applied one at a time, in order;
    each is recorded before it takes effect."""

    def __init__(
        self, restored: Iterable[PanelUpdate] = (), *, recorder: PanelRecorder | None = None
    ) -> None:
        self._panels: dict[PanelKey, PanelUpdate] = {}  # least recently changed first
        for update in restored:
            self._panels.pop(update.key, None)
            self._panels[update.key] = update
        self.recorder = recorder
        self._lock = anyio.Lock()

    def panels(self) -> tuple[PanelUpdate, ...]:
        """Each panel's last accepted update, least recently changed first."""
        return tuple(self._panels.values())

    def get(self, key: PanelKey) -> PanelUpdate | None:
        """The last accepted update of panel ``key``, or None."""
        return self._panels.get(key)

    async def reject(self, update: PanelUpdate) -> None:
        """Record a rejected update (it changes nothing)."""
        async with self._lock:
            if self.recorder is not None:
                await self.recorder.record(update, None)

    async def apply(
        self,
        *,
        identity: str,
        declaration: PanelDeclaration,
        body: Mapping[str, Any],
        tool_call_id: str,
        source: PanelSource,
    ) -> PanelUpdate:
        """Apply one checked update of panel ``(identity, declaration.id)``, record it and
        return it; raises the :class:`~raw_core.errors.PanelError` that refuses it."""
        key = (identity, declaration.id)
        async with self._lock:
            current = self._panels.get(key)
            op = body["op"]
            evicted: PanelKey | None = None
            if op == "replace":
                text = body["document_text"]
                if current is None and len(self._panels) >= MAX_SESSION_PANELS:
                    evicted = next((k for k, u in self._panels.items() if u.closed), None)
                    if evicted is None:
                        raise PanelLimit(
                            f"the session has {MAX_SESSION_PANELS} open panels, the most it"
                            " may have; close one to open another",
                            panel=declaration.id,
                            tool=identity,
                        )
            elif current is None or (op == "patch" and current.closed):
                state = "never opened" if current is None else "closed"
                again = " (replace it to open it again)" if current is not None else ""
                raise PanelUnknown(
                    f"panel {declaration.id} is {state} in this session{again}",
                    panel=declaration.id,
                    tool=identity,
                )
            elif op == "patch":
                expected = body.get("revision")
                if expected is not None and expected != current.revision:
                    raise PanelRevisionConflict(
                        f"the patch expects revision {expected}; panel {declaration.id} is at"
                        f" revision {current.revision}",
                        panel=declaration.id,
                        tool=identity,
                        expected=expected,
                        revision=current.revision,
                    )
                text = patched_text(current.document, body["patch"])
            else:
                text = None
            update = PanelUpdate(
                tool_call_id=tool_call_id,
                identity=identity,
                panel=declaration.id,
                op=op,
                source=source,
                revision=1 if current is None else (current.revision or 0) + 1,
                document_text=text,
                declaration=declaration.to_dict(),
            )
            keys = None
            if current is None:
                keys = (*(k for k in self._panels if k != evicted), key)
            if self.recorder is not None:
                await self.recorder.record(update, keys)
            if evicted is not None:
                del self._panels[evicted]
            self._panels.pop(key, None)
            self._panels[key] = update
            return update


def has_panel_blocks(returned: Any) -> bool:
    """Whether a handler's result holds panel blocks (``{"type": "panel", ...}`` in its
    ``content``) for :meth:`CallPanels.take_blocks` to take out."""
    # Asked of every result: exact types first, the ABCs only for other mappings.
    if type(returned) is not dict and not isinstance(returned, Mapping):
        return False
    content = returned.get("content")
    if type(content) is not list and not isinstance(content, list | tuple):
        return False
    for block in content:  # a loop, not any(): no generator per result
        if (type(block) is dict or isinstance(block, Mapping)) and block.get("type") == "panel":
            return True
    return False


class CallPanels:
    """``context.panels``: what one tool call may do with its tool's panels.

    ``await update(panel, body)`` applies ``{"op": "replace", "document": ...}``,
    ``{"op": "patch", "patch": [...], "revision"?: n}`` or ``{"op": "close"}`` and returns
    the new revision, or raises the panel error (a :class:`~raw_core.errors.RawError`);
    ``get(panel)`` returns a :class:`PanelView`. Both raise ``panel_closed_context`` once
    the call has ended. Every update, rejected ones too, counts toward
    :data:`MAX_UPDATES_PER_CALL` per panel.
    """

    def __init__(
        self,
        board: PanelBoard,
        *,
        identity: str,
        declarations: Sequence[PanelDeclaration],
        tool_call_id: str,
    ) -> None:
        self._board = board
        self._identity = identity
        self._declared = {d.id: d for d in declarations} if declarations else {}
        self._tool_call_id = tool_call_id
        self._counts: dict[str, int] = {}
        self._updates: list[PanelUpdate] = []
        self._rejections = 0
        self._unrecorded = 0
        self._rejected_lines: list[str] = []
        self._ended = False

    @property
    def identity(self) -> str:
        """The identity of the tool whose call this is."""
        return self._identity

    @property
    def updates(self) -> tuple[PanelUpdate, ...]:
        """The call's recorded updates so far, in order."""
        return tuple(self._updates)

    @property
    def unrecorded(self) -> int:
        """Rejected result-block updates past :data:`MAX_RECORDED_REJECTIONS`."""
        return self._unrecorded

    @property
    def rejected_lines(self) -> tuple[str, ...]:
        """What the model reads of each rejected result block, in order (the error's
        model-facing text: no host-side text such as another tool's identity)."""
        return tuple(self._rejected_lines)

    def _check_open(self) -> None:
        if self._ended:
            raise PanelClosedContext(
                f"the call {self._tool_call_id} of {self._identity} has ended; its"
                " context.panels can no longer be used",
                tool=self._identity,
            )

    def _resolve(self, panel: Any) -> PanelDeclaration:
        if not isinstance(panel, str) or not panel:
            raise PanelInvalid(
                "a panel is named by its id or its full name <identity>:<id>", field="$.panel"
            )
        owner, panel_id = split_name(panel)
        if owner is not None and owner != self._identity:
            raise PanelNotOwned(
                f"panel {panel} belongs to {owner}; {self._identity} may update and read only"
                " its own panels",
                for_model=f"panel {panel} belongs to another tool; a tool updates only its own",
                panel=panel,
                tool=self._identity,
            )
        declaration = self._declared.get(panel_id)
        if declaration is None:
            declared = ", ".join(sorted(self._declared)) or "none"
            raise PanelUndeclared(
                f"{self._identity} declares no panel {panel_id!r} (it declares: {declared})",
                for_model=f"the tool declares no panel {panel_id!r} (it declares: {declared})",
                panel=panel,
                tool=self._identity,
            )
        return declaration

    def get(self, panel: str) -> PanelView:
        """The last revision and document of one of this tool's panels; ``panel_unknown``
        for a panel that was never opened in the session."""
        self._check_open()
        declaration = self._resolve(panel)
        current = self._board.get((self._identity, declaration.id))
        if current is None or current.revision is None:
            raise PanelUnknown(
                f"panel {declaration.id} was never opened in this session",
                panel=panel,
                tool=self._identity,
            )
        return PanelView(
            revision=current.revision, document=freeze(current.document), closed=current.closed
        )

    async def update(self, panel: str, body: Mapping[str, Any]) -> int:
        """Apply ``body`` to ``panel``; the new revision, or the panel error raised."""
        self._check_open()
        update, error = await self._apply(panel, body, "context")
        if error is not None:
            raise error
        assert update.revision is not None
        return update.revision

    async def take_blocks(self, returned: Any) -> Any:
        """The handler's result without its panel blocks, each applied in order (a
        rejected one never fails the call: the model reads why in the note)."""
        if not has_panel_blocks(returned):
            return returned
        kept: list[Any] = []
        for block in returned["content"]:
            if not (isinstance(block, Mapping) and block.get("type") == "panel"):
                kept.append(block)
                continue
            body = {k: v for k, v in block.items() if k not in ("type", "panel")}
            await self._apply(block.get("panel"), body, "result")
        return {**returned, "content": kept}

    def end(self) -> tuple[PanelUpdate, ...]:
        """End the call: later uses raise ``panel_closed_context``. Its recorded updates."""
        self._ended = True
        return tuple(self._updates)

    async def _apply(
        self, panel: Any, body: Any, source: PanelSource
    ) -> tuple[PanelUpdate, PanelError | None]:
        name = panel if isinstance(panel, str) else json.dumps(panel, default=repr)
        panel_id = split_name(name)[1]
        declaration = self._declared.get(panel_id)
        op = body.get("op") if isinstance(body, Mapping) else None
        try:
            count = self._counts[panel_id] = self._counts.get(panel_id, 0) + 1
            if count > MAX_UPDATES_PER_CALL:
                raise PanelRateLimited(
                    f"panel {name} had {MAX_UPDATES_PER_CALL} updates in this call, the most"
                    " one call may make",
                    panel=name,
                    tool=self._identity,
                )
            declaration = self._resolve(panel)
            update = await self._board.apply(
                identity=self._identity,
                declaration=declaration,
                body=checked_body(body),
                tool_call_id=self._tool_call_id,
                source=source,
            )
        except PanelError as error:
            update = self._rejected(name, panel_id, op, source, error, declaration)
            if source == "result":
                self._rejected_lines.append(
                    f"panel {update.panel} update rejected: {error.code} {error.model_message}"
                )
            if self._rejections < MAX_RECORDED_REJECTIONS:
                self._rejections += 1
                await self._board.reject(update)
                self._updates.append(update)
            elif source == "result":
                self._unrecorded += 1
            return update, error
        self._updates.append(update)
        return update, None

    def _rejected(
        self,
        name: str,
        panel_id: str,
        op: Any,
        source: PanelSource,
        error: PanelError,
        declaration: PanelDeclaration | None,
    ) -> PanelUpdate:
        owned = declaration is not None and split_name(name)[0] in (None, self._identity)
        current = self._board.get((self._identity, panel_id)) if owned else None
        problem = {"code": error.code, "message": error.message}
        if error.field is not None:
            problem["field"] = error.field
        return PanelUpdate(
            tool_call_id=self._tool_call_id,
            identity=self._identity,
            panel=panel_id if owned else name,
            op=op if isinstance(op, str) else "",
            source=source,
            revision=current.revision if current is not None else None,
            error=problem,
            declaration=declaration.to_dict() if owned and declaration is not None else None,
        )


def panel_notes(
    updates: Iterable[PanelUpdate], rejected: Sequence[str] = (), unrecorded: int = 0
) -> str:
    """What the model reads of a call's panel updates: one line per updated panel —
    ``panel <id> updated (revision <n>)``, or ``panel <id> closed (revision <n>)`` when the
    call's last update of it closed it — then the ``rejected`` lines of its result blocks,
    ``panel <id> update rejected: <code> <message>`` (at most 16, then a count of the rest
    and of the ``unrecorded`` ones). Empty when the call updated no panel."""
    last: dict[str, PanelUpdate] = {}
    for update in updates:
        if update.accepted:
            last[update.panel] = update
    lines = [
        f"panel {u.panel} {'closed' if u.closed else 'updated'} (revision {u.revision})"
        for u in last.values()
    ]
    lines += rejected[:MAX_REJECTION_LINES]
    more = max(len(rejected) - MAX_REJECTION_LINES, 0) + unrecorded
    if more > 0:
        lines.append(f"[{more} more panel updates rejected]")
    return "\n".join(lines)
