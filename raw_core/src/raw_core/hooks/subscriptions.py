"""An agent's command hooks bound to its tools: which hooks run for which call.

A hook of tool events (``PreToolUse``, ``PostToolUse``) subscribes to calls with ``match``
(a glob over tool identities, as rules have; every tool when absent) and ``when`` (a
predicate, evaluated by the rules' evaluator). :meth:`HookSet.bind` does, when the agent is
loaded, all the work that does not depend on a call: it matches each hook's glob against
each selected tool and binds its ``when`` to the schema of each tool it matches — a
predicate that does not fit one of them is ``config_invalid`` naming the hook and the tool,
as for rules. Per call, :meth:`HookSet.for_call` then looks the tool's subscriptions up and
evaluates their precompiled predicates: a hook that does not match costs a dict lookup and,
with ``when``, one predicate; its program never starts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from raw_core.config import DEFAULT_HOOK_TIMEOUT_MS
from raw_core.errors import ConfigInvalid
from raw_core.hooks.loader import LoadedHook
from raw_core.hooks.manifest import TOOL_EVENTS
from raw_core.policy.predicate import BoundPredicate, PredicateError, ToolShape

if TYPE_CHECKING:
    from raw_core.tools.loader import LoadedTool

__all__ = ["HookSet", "Subscription", "SubscriptionExplanation"]

_NONE: Final[tuple[Any, ...]] = ()


class Subscription:
    """One hook subscribed to one tool's calls at one event: its ``when`` bound to that
    tool (``None``: every call of the tool)."""

    __slots__ = ("alone", "hook", "on_effects", "predicate", "test")

    def __init__(self, hook: LoadedHook, predicate: BoundPredicate | None) -> None:
        self.hook = hook
        self.alone = (hook,)
        """``(hook,)``, built once: what :meth:`HookSet.for_call` adds when it applies."""
        self.predicate = predicate
        # The precompiled accessor, read directly on the hot path (as the rules' chains do).
        self.test = predicate.accessor if predicate is not None else None
        self.on_effects = predicate is not None and predicate.source == "effects"

    def applies(self, arguments: Any, effects: Any) -> bool:
        """Whether the hook runs for a call with these (validated) values."""
        test = self.test
        return test is None or test(effects if self.on_effects else arguments)


@attrs.frozen(kw_only=True)
class SubscriptionExplanation:
    """Whether one hook would run at one event of one call, and why (``raw policy explain``)."""

    hook: str
    event: str
    runs: bool
    why: str

    def to_dict(self) -> dict[str, Any]:
        """``{hook, event, runs, why}``."""
        return {"hook": self.hook, "event": self.event, "runs": self.runs, "why": self.why}


class HookSet:
    """An agent's selected hooks, in ``hooks.use`` order, bound to its tools. Build one with
    :meth:`bind`; :meth:`empty` is the set of an agent that selects none.

    ``timeout_cap_ms`` is the agent's ``hooks.timeout_ms`` (``None``: it sets none, and
    each hook keeps its own limit); ``withheld_env`` the names of
    environment variables a hook does not receive (the credentials raw resolves).
    """

    __slots__ = ("_by_event", "_hooks", "_timeout_cap_ms", "_tool_subs", "withheld_env")

    def __init__(
        self,
        hooks: Sequence[LoadedHook],
        tool_subs: Mapping[str, Mapping[str, tuple[Subscription, ...]]],
        *,
        timeout_cap_ms: int | None = None,
        withheld_env: frozenset[str] = frozenset(),
    ) -> None:
        self._hooks = tuple(hooks)
        self._tool_subs = {event: dict(subs) for event, subs in tool_subs.items()}
        self._by_event: dict[str, tuple[LoadedHook, ...]] = {}
        for hook in self._hooks:
            for event in hook.events:
                self._by_event[event] = (*self._by_event.get(event, ()), hook)
        self._timeout_cap_ms = timeout_cap_ms
        self.withheld_env = withheld_env

    @classmethod
    def empty(cls) -> HookSet:
        """No hooks."""
        return cls((), {})

    @classmethod
    def bind(
        cls,
        hooks: Sequence[LoadedHook],
        tools: Iterable[ToolShape | LoadedTool],
        *,
        field: str = "$.hooks.use",
        timeout_cap_ms: int | None = None,
        withheld_env: frozenset[str] = frozenset(),
    ) -> HookSet:
        """Subscribe ``hooks`` to the selected ``tools``. Raises ``config_invalid`` (``field``
        ``<field>[<index>]``, ``hook``, ``tool``) for a ``when`` that does not fit a tool
        its ``match`` selects."""
        shapes = [t if isinstance(t, ToolShape) else ToolShape.of(t) for t in tools]
        subs: dict[str, dict[str, list[Subscription]]] = {event: {} for event in TOOL_EVENTS}
        for index, hook in enumerate(hooks):
            events = hook.manifest.tool_events
            if not events:
                continue
            for shape in shapes:
                if not hook.match.matches(shape.identity):
                    continue
                predicate = _bind(hook, shape, f"{field}[{index}]") if hook.when else None
                subscription = Subscription(hook=hook, predicate=predicate)
                for event in events:
                    subs[event].setdefault(shape.identity, []).append(subscription)
        frozen = {
            event: {identity: tuple(found) for identity, found in by_tool.items()}
            for event, by_tool in subs.items()
        }
        return cls(hooks, frozen, timeout_cap_ms=timeout_cap_ms, withheld_env=withheld_env)

    # --- what is selected ------------------------------------------------------------

    @property
    def hooks(self) -> tuple[LoadedHook, ...]:
        """The selected hooks, in ``hooks.use`` order."""
        return self._hooks

    def __bool__(self) -> bool:
        return bool(self._hooks)

    def __len__(self) -> int:
        return len(self._hooks)

    def for_event(self, event: str) -> tuple[LoadedHook, ...]:
        """The hooks that run at a non-tool ``event``, in order."""
        return self._by_event.get(event, _NONE)

    def subscriptions(self, event: str, identity: str) -> tuple[Subscription, ...]:
        """The hooks subscribed to ``identity``'s calls at ``event`` (globs already
        matched; ``when`` not yet evaluated), in order."""
        by_tool = self._tool_subs.get(event)
        return by_tool.get(identity, _NONE) if by_tool else _NONE

    def for_call(
        self, event: str, identity: str, arguments: Any, effects: Any
    ) -> tuple[LoadedHook, ...]:
        """The hooks that run at ``event`` for one call, in order.

        The common answer, none, builds nothing: the tuple only grows (from the shared
        empty one) by each hook that applies.
        """
        by_tool = self._tool_subs.get(event)
        subs = by_tool.get(identity) if by_tool else None
        if not subs:
            return _NONE
        chosen = _NONE
        for sub in subs:
            test = sub.test
            if test is None or test(effects if sub.on_effects else arguments):
                chosen += sub.alone
        return chosen

    def timeout(self, hook: LoadedHook) -> float:
        """Seconds ``hook`` may run: its own ``timeout_ms`` (60 s when it sets none),
        lowered to the agent's ``hooks.timeout_ms`` when the agent sets one — which only
        ever lowers it."""
        own = hook.manifest.timeout_ms or DEFAULT_HOOK_TIMEOUT_MS
        cap = self._timeout_cap_ms
        return (own if cap is None else min(own, cap)) / 1000

    # --- explain -----------------------------------------------------------------------

    def explain(
        self, identity: str, arguments: Any, effects: Any
    ) -> tuple[SubscriptionExplanation, ...]:
        """For each hook of tool events and each of its tool events: would it run for this
        call, and why."""
        found: list[SubscriptionExplanation] = []
        for hook in self._hooks:
            for event in hook.manifest.tool_events:
                sub = next((s for s in self.subscriptions(event, identity) if s.hook is hook), None)
                if sub is None:
                    why = f"match {hook.match.pattern!r} does not match {identity}"
                    runs = False
                elif sub.predicate is None:
                    why = f"match {hook.match.pattern!r} matches; no condition"
                    runs = True
                else:
                    predicate = sub.predicate
                    value = arguments if predicate.source == "arguments" else effects
                    outcome = predicate.explain(value)
                    runs = outcome.matched
                    why = f"match {hook.match.pattern!r} matches; when: {outcome.why}"
                found.append(
                    SubscriptionExplanation(hook=hook.identity, event=event, runs=runs, why=why)
                )
        return tuple(found)


def _bind(hook: LoadedHook, shape: ToolShape, field: str) -> BoundPredicate:
    assert hook.when is not None
    try:
        return hook.when.bind(shape)
    except PredicateError as exc:
        raise ConfigInvalid(
            f"hook {hook.identity} ({hook.folder / 'hook.json'}) matches {shape.identity}, and"
            f" when.{exc.key} does not fit it: {exc.message}",
            field=field,
            hook=hook.identity,
            tool=shape.identity,
        ) from None
