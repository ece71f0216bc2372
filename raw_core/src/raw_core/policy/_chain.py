"""A tool's decision chain: the rules that can decide its calls, last first, with the
conditional rules that test the same strings joined into one RE2 pass, so that a call no
rule's condition matches is decided by one test. :class:`~raw_core.policy._engine.Policy`
builds one per selected tool when it is bound; deciding a call walks it. A
:class:`TextChain` decides the same from the strings at the one path the rules read, for
floors, which hand one reading of a call to every layer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from raw_core._re2 import CompiledPattern, PatternError, compile_any
from raw_core.policy._records import ALLOW, Decision
from raw_core.policy.predicate import BoundPredicate, join_predicates

__all__ = ["Chain", "Step", "TextChain"]

_PASSED: Final = (True,)
"""What the one joined test of a chain answered when it passed."""


class Step:
    """One rule in a tool's decision chain: the decision it gives when it matches, and its
    predicate's accessor (``None`` for an unconditional rule). ``guard`` is the index of
    the chain's joined test that covers it (-1: none): when that test fails, this rule
    cannot match and is skipped."""

    __slots__ = ("decision", "guard", "on_effects", "predicate", "test")

    def __init__(self, decision: Decision, predicate: BoundPredicate | None) -> None:
        self.decision = decision
        self.predicate = predicate
        self.test = predicate.accessor if predicate is not None else None
        self.on_effects = predicate is not None and predicate.source == "effects"
        self.guard = -1


class Chain:
    """The rules that can decide one tool's calls, last first, with the conditional rules
    that read the same source and path joined into one pass
    (:func:`~raw_core.policy.predicate.join_predicates`).

    A call whose strings match none of a group's patterns is decided without running any
    of them; only when a group's joined test passes are its rules tried one by one, in
    chain order, so the last matching rule still wins.
    """

    __slots__ = ("guards", "steps", "unguarded")

    def __init__(self, steps: tuple[Step, ...]) -> None:
        self.steps = steps
        groups: dict[tuple[str, tuple[object, ...]], list[Step]] = {}
        for step in steps:
            if step.predicate is not None:
                key = (step.predicate.source, step.predicate.steps)
                groups.setdefault(key, []).append(step)
        guards: list[tuple[Callable[[Any], bool], bool]] = []
        for (source, _path), members in groups.items():
            if len(members) < 2:
                continue
            predicates = [m.predicate for m in members if m.predicate is not None]
            for accessor, indexes in join_predicates(predicates):
                for index in indexes:
                    members[index].guard = len(guards)
                guards.append((accessor, source == "effects"))
        self.guards = tuple(guards)
        self.unguarded = tuple(step for step in steps if step.guard < 0)
        """The steps left to try when every joined test fails."""

    def decide(self, arguments: Any, effects: Any) -> Decision:
        steps = self.steps
        guards = self.guards
        if guards:
            if len(guards) == 1:  # the common case: one joined test, no list to build
                joined, on_effects = guards[0]
                if joined(effects if on_effects else arguments):
                    return self._walk(arguments, effects, _PASSED)
            else:
                passed = [test(effects if on_effects else arguments) for test, on_effects in guards]
                if any(passed):
                    return self._walk(arguments, effects, passed)
            steps = self.unguarded
        for step in steps:
            test = step.test
            if test is None or test(effects if step.on_effects else arguments):
                return step.decision
        return ALLOW

    def _walk(self, arguments: Any, effects: Any, passed: Sequence[bool]) -> Decision:
        """Every step in order, skipping those whose joined test failed."""
        for step in self.steps:
            test = step.test
            if test is None:
                return step.decision
            if step.guard >= 0 and not passed[step.guard]:
                continue
            if test(effects if step.on_effects else arguments):
                return step.decision
        return ALLOW

    def on_texts(self) -> TextChain | None:
        """The chain as a decision over the strings at the one path every conditional
        rule of it reads (``None`` when they read more than one source or path)."""
        predicates = [step.predicate for step in self.steps if step.predicate is not None]
        if len({(p.source, p.steps) for p in predicates}) > 1:
            return None
        return TextChain(self.steps)


_GUARD_AT: Final = 2
"""A chain on texts joins its patterns into one guard when at least this many have no
required literal: each of those costs an RE2 search when it does not match, which the one
guard saves; a pattern with a literal is passed over for the cost of a substring test."""


def _literal(pattern: CompiledPattern) -> str:
    """A string every match of ``pattern`` contains (``""`` when none is known)."""
    required = pattern.required
    return required[0] if len(required) == 1 else ""


class TextChain:
    """A chain whose conditional rules all read one source at one path, decided from the
    strings at that path (read once by the caller, who may hand them to several layers).

    Tries the conditional steps last first, each on every string, then gives the chain's
    last unconditional rule (or allow): what :meth:`Chain.decide` gives for the value the
    strings were read from. A step passes over a string that lacks its pattern's required
    literal without calling RE2 (``""`` when it has none: every string holds it), which
    changes no answer.
    """

    __slots__ = ("guard", "otherwise", "steps")

    def __init__(self, steps: Sequence[Step]) -> None:
        patterns = [s.predicate.pattern for s in steps if s.predicate is not None]
        self.steps = tuple(
            (s.decision, _literal(s.predicate.pattern), s.predicate.pattern.test)
            for s in steps
            if s.predicate is not None
        )
        self.otherwise = steps[-1].decision if steps and steps[-1].predicate is None else ALLOW
        self.guard: Callable[[str], bool] | None = None
        """One joined test of every step's pattern, when it saves RE2 searches."""
        if sum(not pattern.required for pattern in patterns) >= _GUARD_AT:
            try:
                self.guard = compile_any([pattern.pattern for pattern in patterns]).test
            except PatternError:
                pass  # RE2 will not join them: each is tried alone

    def decide(self, texts: Sequence[str]) -> Decision:
        guard = self.guard
        if guard is not None:
            for text in texts:
                if guard(text):
                    break
            else:
                return self.otherwise
        if len(texts) == 1:  # the common case (one command): no loop per step
            text = texts[0]
            for decision, literal, test in self.steps:
                if literal in text and test(text):
                    return decision
            return self.otherwise
        for decision, literal, test in self.steps:
            for text in texts:
                if literal in text and test(text):
                    return decision
        return self.otherwise
