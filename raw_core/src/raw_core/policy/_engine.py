"""An agent's ``tools.rules``, bound to its selected tools: verdicts, exposure, explain, lint.

The rules (spec 001, "Control tools with rules"; design.md, "Decisions"):

1. ``match`` is a glob over the full identity: ``*`` any run of characters (``/``
   included), ``?`` one character, nothing else special; or a list of such globs, which
   matches an identity any of them matches (an extension of spec 001, docs/design.md).
2. Rules apply in order and the last matching rule wins; a rule with ``when`` matches only
   when its predicate matches the call. No matching rule: allow.
3. A selected tool whose last matching rule is an unconditional deny is not exposed: the
   model never receives its schema, and a direct call is ``tool_not_exposed``. (This is
   "its last matching unconditional rule is deny and no later conditional rule matches
   its identity".) Any other tool is exposed and each call is decided by all the rules.

:meth:`Policy.bind` does all the work that does not depend on a call, when the config is
loaded: it compiles every glob and regex, binds every predicate to every selected tool its
glob matches (a predicate that cannot be bound is a ``config_invalid`` naming the rule and
the tool), and keeps per tool only the rules that can decide its calls, last first.
:meth:`Policy.decide` is then pure, synchronous and does no I/O and no parsing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from raw_core.config import Effect, Rule
from raw_core.errors import ConfigInvalid, ToolNotExposed, ToolUnknown
from raw_core.policy._chain import Chain, Step
from raw_core.policy._glob import Glob
from raw_core.policy._records import (
    ALLOW,
    Decision,
    Explanation,
    LintFinding,
    RuleExplanation,
)
from raw_core.policy.examples import ExampleResult, raise_failed
from raw_core.policy.examples import check_examples as check
from raw_core.policy.predicate import (
    BoundPredicate,
    PredicateError,
    PreparedPredicate,
    ToolShape,
    prepare_predicate,
)

if TYPE_CHECKING:
    from raw_core.tools.loader import LoadedTool

__all__ = [
    "Decision",
    "Explanation",
    "LintFinding",
    "Policy",
    "RuleExplanation",
]


def _rule_label(index: int, rule: Rule) -> str:
    return f"rule {index} (match {rule.match_text}, effect {rule.effect!r})"


class _Globs:
    """A rule's compiled globs: an identity matches when any of them matches it."""

    __slots__ = ("globs",)

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.globs = tuple(Glob(pattern) for pattern in patterns)

    def matches(self, identity: str) -> bool:
        return any(glob.matches(identity) for glob in self.globs)


def _not_matching(rule: Rule, identity: str) -> str:
    if isinstance(rule.match, str):
        return f"glob {rule.match!r} does not match {identity}"
    return f"none of the globs {rule.match_text} matches {identity}"


class Policy:
    """Rules bound to a set of selected tools. Build one with :meth:`bind`."""

    __slots__ = (
        "_bound",
        "_chains",
        "_examples",
        "_hidden",
        "_layer",
        "_matching",
        "_rule_tools",
        "_rules",
    )

    def __init__(
        self,
        *,
        rules: tuple[Rule, ...],
        matching: Mapping[str, tuple[int, ...]],
        bound: Mapping[tuple[int, str], BoundPredicate],
        layer: str = "agent",
        examples: Sequence[ExampleResult] = (),
    ) -> None:
        self._rules = rules
        self._layer = layer
        self._examples = tuple(examples)
        self._matching = dict(matching)
        self._bound = dict(bound)
        self._rule_tools = tuple(
            tuple(identity for identity, indexes in matching.items() if index in indexes)
            for index in range(len(rules))
        )
        decisions = [
            Decision(verdict=rule.effect, rule=i, layer=layer) for i, rule in enumerate(rules)
        ]
        self._chains: dict[str, Chain] = {}
        self._hidden: dict[str, int] = {}
        for identity, indexes in self._matching.items():
            chain: list[Step] = []
            for index in reversed(indexes):
                predicate = self._bound.get((index, identity))
                chain.append(Step(decisions[index], predicate))
                if predicate is None:
                    break  # an unconditional rule: nothing before it can decide
            self._chains[identity] = Chain(tuple(chain))
            if chain and chain[0].predicate is None and chain[0].decision.verdict == "deny":
                self._hidden[identity] = indexes[-1]

    @classmethod
    def bind(
        cls,
        rules: Sequence[Rule],
        tools: Iterable[ToolShape | LoadedTool],
        *,
        field: str = "$.tools.rules",
        layer: str = "agent",
        check_examples: bool = True,
    ) -> Policy:
        """Bind ``rules`` to the selected ``tools``.

        Raises :class:`~raw_core.errors.ConfigInvalid` with ``field`` (the rule's JSON
        path, down to ``when.regex``, ``when.source`` or ``when.any``), ``rule`` (its
        index) and, when the fault shows against one tool, ``tool`` (its identity): the
        first problem, with every one (each rule's: its predicate, its first failing
        example, its binding to each tool; as ``{path, message}``) in
        ``context["problems"]``, as a config file's check lists its own. Every
        rule's ``examples`` are run through its predicate (whatever tools its glob
        matches); a failing one is ``config_invalid`` at
        ``...examples.match[<i>]`` (or ``not_match``) unless ``check_examples`` is False,
        which keeps the outcomes in :attr:`examples` instead (``raw policy test``).
        ``layer`` names the rules in the decisions (``agent``, or a floor's layer).
        """
        shapes = [t if isinstance(t, ToolShape) else ToolShape.of(t) for t in tools]
        rules = tuple(rules)
        globs = [_Globs(rule.globs) for rule in rules]
        prepared: dict[int, PreparedPredicate] = {}
        problems: list[ConfigInvalid] = []
        for index, rule in enumerate(rules):
            if rule.when is not None:
                try:
                    prepared[index] = prepare_predicate(rule.when)
                except PredicateError as exc:
                    problems.append(
                        ConfigInvalid(
                            f"{_rule_label(index, rule)}: when.{exc.key}: {exc.message}",
                            field=f"{field}[{index}].when.{exc.key}",
                            rule=index,
                        )
                    )
        examples = check(rules, prepared, field=field)
        if check_examples:
            for index, rule in enumerate(rules):
                try:
                    raise_failed(
                        rule, [r for r in examples if r.rule == index], _rule_label(index, rule)
                    )
                except ConfigInvalid as exc:
                    problems.append(exc)
        matching: dict[str, tuple[int, ...]] = {}
        bound: dict[tuple[int, str], BoundPredicate] = {}
        for shape in shapes:
            indexes = tuple(i for i, glob in enumerate(globs) if glob.matches(shape.identity))
            matching[shape.identity] = indexes
            for index in indexes:
                predicate = prepared.get(index)
                if predicate is None:
                    continue
                try:
                    bound[index, shape.identity] = predicate.bind(shape)
                except PredicateError as exc:
                    problems.append(
                        ConfigInvalid(
                            f"{_rule_label(index, rules[index])} matches {shape.identity},"
                            f" and when.{exc.key} does not fit it: {exc.message}",
                            field=f"{field}[{index}].when.{exc.key}",
                            rule=index,
                            tool=shape.identity,
                        )
                    )
        if problems:
            first = problems[0]
            first.context["problems"] = [
                {"path": problem.field, "message": problem.message} for problem in problems
            ]
            raise first
        return cls(rules=rules, matching=matching, bound=bound, layer=layer, examples=examples)

    # --- what the rules are bound to ------------------------------------------------------

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The rules, in config order."""
        return self._rules

    @property
    def layer(self) -> str:
        """Whose rules these are: ``agent``, or a floor's layer."""
        return self._layer

    @property
    def examples(self) -> tuple[ExampleResult, ...]:
        """Every rule example's outcome, in rule order (all passed unless bound with
        ``check_examples=False``)."""
        return self._examples

    @property
    def identities(self) -> tuple[str, ...]:
        """The tools the rules are bound to, in the order given to :meth:`bind`."""
        return tuple(self._matching)

    @property
    def hidden(self) -> Mapping[str, int]:
        """Hidden (not exposed) tools → the index of the unconditional deny that hides them."""
        return dict(self._hidden)

    def hidden_layer(self, identity: str) -> str | None:
        """Whose rules hide ``identity``: :attr:`layer` when hidden, else None."""
        return self._layer if identity in self._hidden else None

    def matching_rules(self, identity: str) -> tuple[int, ...]:
        """Indexes of the rules whose glob matches ``identity``, in config order."""
        return self._matching_for(identity)

    def predicate(self, rule: int, identity: str) -> BoundPredicate | None:
        """Rule ``rule``'s predicate as bound to ``identity`` (``None`` when unconditional)."""
        return self._bound.get((rule, identity))

    def _matching_for(self, identity: str) -> tuple[int, ...]:
        indexes = self._matching.get(identity)
        if indexes is None:
            raise ToolUnknown(f"{identity} is not a selected tool", tool=identity)
        return indexes

    # --- exposure ---------------------------------------------------------------------

    def is_exposed(self, identity: str) -> bool:
        """Whether the model receives the tool's schema (``False`` for unknown tools too)."""
        return identity in self._matching and identity not in self._hidden

    def check_exposed(self, identity: str) -> None:
        """Dispatch step 1: raise ``tool_not_exposed`` for a hidden tool, ``tool_unknown``
        for one that is not selected."""
        self._matching_for(identity)
        rule = self._hidden.get(identity)
        if rule is not None:
            raise ToolNotExposed(
                f"{identity} is denied by the agent's rules and is not offered to the model",
                tool=identity,
                rule=rule,
            )

    # --- per call ----------------------------------------------------------------------

    def decide(self, identity: str, arguments: Any, effects: Any = None) -> Decision:
        """The verdict for one call of ``identity`` with its validated ``arguments`` and
        ``effects`` (``None`` when the tool declares none): the last matching rule wins.

        Pure and synchronous; walks only the rules that can decide this tool's calls, from
        the last backwards, the conditional ones on one path in one pass. Raises
        ``tool_unknown`` for a tool the rules are not bound to.
        """
        chain = self._chains.get(identity)
        if chain is None:
            raise ToolUnknown(f"{identity} is not a selected tool", tool=identity)
        return chain.decide(arguments, effects)

    def conditions(self, identity: str) -> tuple[BoundPredicate, ...]:
        """The predicates of the conditional rules that can decide ``identity``'s calls
        (those after its last unconditional rule), last first."""
        chain = self._chains.get(identity)
        if chain is None:
            raise ToolUnknown(f"{identity} is not a selected tool", tool=identity)
        return tuple(step.predicate for step in chain.steps if step.predicate is not None)

    def otherwise(self, identity: str) -> Decision:
        """The verdict for a call of ``identity`` that none of its :meth:`conditions`
        match: its last unconditional rule's, else allow."""
        chain = self._chains.get(identity)
        if chain is None:
            raise ToolUnknown(f"{identity} is not a selected tool", tool=identity)
        steps = chain.steps
        return steps[-1].decision if steps and steps[-1].test is None else ALLOW

    def decider(self, identity: str) -> Callable[[Any, Any], Decision]:
        """``decide`` for one tool, bound once: ``decider(identity)(arguments, effects)``
        is ``decide(identity, arguments, effects)`` without the lookup (for a caller that
        decides many calls of the same tool, such as :class:`~raw_core.policy.FlooredPolicy`).
        Raises ``tool_unknown`` for a tool the rules are not bound to."""
        chain = self._chains.get(identity)
        if chain is None:
            raise ToolUnknown(f"{identity} is not a selected tool", tool=identity)
        return chain.decide

    def text_decider(self, identity: str) -> Callable[[Sequence[str]], Decision] | None:
        """``decide`` for one tool from the strings its conditions read, when they all read
        one source at one path: ``text_decider(identity)(texts)`` is ``decide(identity,
        ...)`` for a call whose strings at that path are ``texts``
        (:func:`~raw_core.policy.predicate.compile_strings`). For a caller that hands the
        same strings to several rule sets (:class:`~raw_core.policy.FlooredPolicy`);
        ``None`` when the conditions read more than one source or path."""
        chain = self._chains.get(identity)
        if chain is None:
            raise ToolUnknown(f"{identity} is not a selected tool", tool=identity)
        texts = chain.on_texts()
        return texts.decide if texts is not None else None

    def explain(self, identity: str, arguments: Any, effects: Any = None) -> Explanation:
        """Every rule, matched or not and why, for one call; the verdict and deciding rule."""
        matching = set(self._matching_for(identity))
        entries: list[tuple[int, Rule, bool, str]] = []
        for index, rule in enumerate(self._rules):
            if index not in matching:
                entries.append((index, rule, False, _not_matching(rule, identity)))
                continue
            predicate = self._bound.get((index, identity))
            if predicate is None:
                entries.append((index, rule, True, f"glob matches {identity}; no condition"))
                continue
            value = arguments if predicate.source == "arguments" else effects
            outcome = predicate.explain(value)
            entries.append((index, rule, outcome.matched, f"glob matches; when: {outcome.why}"))
        decided_by: int | None = None
        for index, _rule, matched, _why in reversed(entries):
            if matched:
                decided_by = index
                break
        verdict: Effect = "allow" if decided_by is None else self._rules[decided_by].effect
        explained: list[RuleExplanation] = []
        for index, rule, matched, why in entries:
            if matched and decided_by is not None and index < decided_by:
                why += f"; a later matching rule ({decided_by}) decides"
            elif matched and index == decided_by:
                why += "; the last matching rule: it decides"
            explained.append(
                RuleExplanation(
                    index=index, match=rule.match, effect=rule.effect, matched=matched, why=why
                )
            )
        return Explanation(
            identity=identity,
            exposed=self.is_exposed(identity),
            rules=tuple(explained),
            verdict=verdict,
            decided_by=decided_by,
        )

    # --- lint --------------------------------------------------------------------------

    def lint(self) -> tuple[LintFinding, ...]:
        """Rules whose glob matches no selected tool, and rules that can never decide
        because, for every selected tool they match, a later unconditional rule matches
        it too. In rule order."""
        findings: list[LintFinding] = []
        selected = ", ".join(self._matching) or "none"
        for index, rule in enumerate(self._rules):
            tools = self._rule_tools[index]
            if not tools:
                findings.append(
                    LintFinding(
                        kind="matches_nothing",
                        rule=index,
                        match=rule.match,
                        effect=rule.effect,
                        message=f"{_rule_label(index, rule)} matches no selected tool"
                        f" (selected: {selected})",
                    )
                )
                continue
            shadows: list[int] = []
            for identity in tools:
                later = [
                    i for i in self._matching[identity] if i > index and self._rules[i].when is None
                ]
                if not later:
                    break
                shadows.append(later[0])
            else:
                by = sorted(set(shadows))
                names = ", ".join(str(i) for i in by)
                findings.append(
                    LintFinding(
                        kind="never_decides",
                        rule=index,
                        match=rule.match,
                        effect=rule.effect,
                        message=f"{_rule_label(index, rule)} never decides: every selected"
                        f" tool it matches ({', '.join(tools)}) is matched by a later"
                        f" unconditional rule (rule{'s' if len(by) > 1 else ''} {names})",
                        tools=tools,
                        shadowed_by=tuple(by),
                    )
                )
        return tuple(findings)
