"""Deciding from the strings at a path, read once, gives the verdicts of the plain walk.

When every layer's conditions on a tool read one path, a floored call that some condition
may match has its strings read once and each layer decides from them
(``Policy.text_decider``): its conditions tried one by one (each skipping a string that
lacks its pattern's required literal), or behind one joined test when several patterns
have no such literal. Generated rules, floors and calls check that this agrees with each
layer's own ``decide`` (the strictest wins, the first layer on a tie), and that one
layer's text decider agrees with its ``decide``; a seeded run checks that the generated
sets really take every route.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raw_core.config import Floor, Predicate, Rule
from raw_core.policy import FlooredPolicy, Policy, bind_floors
from raw_core.policy._chain import TextChain
from raw_core.policy.predicate import compile_strings, parse_path
from tests.raw_core.policy.layered import EFFECTS, TOOLS, random_rules, strictest

# With a required literal (rm, git, push, ab, ...) and without one ((?i), an alternation,
# a class, the empty pattern), and two that RE2 will not join with others.
PATTERNS = (
    r"\brm\s",
    r"^git\s+push\b",
    "ab",
    "c$",
    "(?i)AB",
    "a|b",
    "[bc]a",
    "",
    "x*",
    r"\Qa)|(b",
    "(?P<x>ba)",
)
WORDS = ("a", "b", "ab", "AB", "c", "ba", "rm ", "git push", "x", "a)|(b", " ", "")
COMMANDS = parse_path("commands[*].command")

TEXT = st.lists(st.sampled_from(WORDS), max_size=4).map("".join)
CALLS = st.fixed_dictionaries(
    {"commands": st.lists(st.fixed_dictionaries({"command": TEXT}), max_size=3)},
    optional={"name": TEXT},
)


@st.composite
def rules(draw: st.DrawFn, most: int) -> tuple[Rule, ...]:
    found: list[Rule] = []
    for _ in range(draw(st.integers(0, most))):
        match = draw(st.sampled_from(["t/a", "t/*", "t/b", "*"]))
        if draw(st.integers(0, 9)) < 8:
            path = "commands[*].command" if draw(st.integers(0, 9)) else "name"
            when = Predicate(source="arguments", any=path, regex=draw(st.sampled_from(PATTERNS)))
            found.append(Rule(match=match, effect="ask", when=when))  # a condition only asks
        else:
            found.append(Rule(match=match, effect=draw(st.sampled_from(EFFECTS))))
    return tuple(found)


FLOORS = st.lists(
    st.tuples(st.sampled_from(["project", "user", "managed"]), rules(4)),
    min_size=1,
    max_size=3,
    unique_by=lambda floor: floor[0],
)


def _floored(agent_rules: tuple[Rule, ...], floors: list[tuple[str, tuple[Rule, ...]]]) -> Any:
    agent = Policy.bind(agent_rules, TOOLS)
    return bind_floors(
        agent,
        [Floor(layer=layer, rules=found) for layer, found in floors],  # type: ignore[arg-type]
        TOOLS,
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules(14), FLOORS, st.lists(CALLS, min_size=1, max_size=4))
def test_floored_verdicts_agree_with_each_layer_decided_alone(
    agent_rules: tuple[Rule, ...],
    floors: list[tuple[str, tuple[Rule, ...]]],
    calls: list[dict[str, Any]],
) -> None:
    floored = _floored(agent_rules, floors)
    if isinstance(floored, Policy):
        return
    layers = [floored.agent, *(policy for _floor, policy in floored.floors)]
    for arguments in calls:
        for identity in ("t/a", "t/b"):
            assert floored.decide(identity, arguments) == strictest(layers, identity, arguments)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules(14), st.lists(CALLS, min_size=1, max_size=4))
def test_a_text_decider_agrees_with_decide(
    agent_rules: tuple[Rule, ...], calls: list[dict[str, Any]]
) -> None:
    policy = Policy.bind(agent_rules, TOOLS)
    for identity in ("t/a", "t/b"):
        decider = policy.text_decider(identity)
        paths = {p.steps for p in policy.conditions(identity)}
        assert (decider is None) == (len(paths) > 1)
        if decider is None:
            continue
        strings = compile_strings(paths.pop() if paths else COMMANDS)
        for arguments in calls:
            assert decider(strings(arguments)) == policy.decide(identity, arguments)


def test_the_generated_sets_take_every_route() -> None:
    """The routes above are taken: calls decided from their strings after the joined test
    passed, and layers with and without a joined test of their own."""
    rng = random.Random(20261201)
    texts_route = guarded_layers = plain_layers = 0
    for _ in range(400):
        agent_rules, floors, arguments = _draw(rng)
        floored = _floored(agent_rules, floors)
        if not isinstance(floored, FlooredPolicy):
            continue
        for identity in ("t/a", "t/b"):
            if "_guarded" not in floored._deciders[identity].__qualname__:
                continue
            layers = [floored.agent, *(policy for _floor, policy in floored.floors)]
            for policy in layers:
                chain = policy._chains[identity].on_texts()
                assert isinstance(chain, TextChain)
                if chain.guard is None:
                    plain_layers += 1
                else:
                    guarded_layers += 1
            if any(p.matches(arguments) for policy in layers for p in policy.conditions(identity)):
                texts_route += 1
    assert texts_route > 100
    assert guarded_layers > 50
    assert plain_layers > 300


def _draw(rng: random.Random) -> tuple[tuple[Rule, ...], list[tuple[str, tuple[Rule, ...]]], Any]:
    """A seeded draw of the shapes the strategies above generate."""

    def text() -> str:
        return "".join(rng.choice(WORDS) for _ in range(rng.randint(0, 4)))

    layers = rng.sample(["project", "user", "managed"], rng.randint(1, 3))
    floors = [(layer, random_rules(rng, 4, PATTERNS)) for layer in layers]
    arguments = {"commands": [{"command": text()} for _ in range(rng.randint(0, 3))]}
    return random_rules(rng, 14, PATTERNS), floors, arguments


class Counting(dict[str, Any]):
    """Arguments that count how often a path step looks ``commands`` up."""

    reads = 0

    def get(self, key: str, default: Any = None) -> Any:
        if key == "commands":
            Counting.reads += 1
        return super().get(key, default)


def _when(regex: str) -> Predicate:
    return Predicate(source="arguments", any="commands[*].command", regex=regex)


def test_a_matching_call_is_read_twice_whatever_the_layers() -> None:
    """The joined test reads the call once; when it matches, the strings are read once
    more and every layer decides from them, however many conditions each layer has."""
    agent_rules = [Rule(match="t/*", effect="allow")] + [
        Rule(match="t/a", effect="ask", when=_when(regex))
        for regex in (r"^git\s+push\b", "(?i)AB", "a|b", r"\brm\s")
    ]
    floors = [
        Floor(
            layer="user",
            rules=(
                Rule(match="t/a", effect="ask", when=_when(r"\bdd\s")),
                Rule(match="t/a", effect="ask", when=_when("(?i)MKFS")),
            ),
        ),
        Floor(layer="managed", rules=(Rule(match="t/a", effect="ask", when=_when("mkfs")),)),
    ]
    floored = bind_floors(Policy.bind(agent_rules, TOOLS), floors, TOOLS)
    assert isinstance(floored, FlooredPolicy)
    for text, layer in (("rm -rf build", "agent"), ("dd if=x", "user"), ("mkfs", "user")):
        Counting.reads = 0
        decision = floored.decide("t/a", Counting(commands=[{"command": text}]))
        assert (decision.verdict, decision.layer) == ("ask", layer)
        assert Counting.reads == 2, text
    Counting.reads = 0
    assert floored.decide("t/a", Counting(commands=[{"command": "ls"}])).verdict == "allow"
    assert Counting.reads == 1
