"""A predicate's generated accessor behaves exactly as the chain of one closure per step.

``compile_accessor`` generates one function per path; ``chain_accessor`` is the plain
reading of the path's semantics (a name step looks into a mapping, ``[*]`` into a list,
tuple or other sequence that is no string or bytes, the leaf tests strings only, anything
else does not match). On many random paths and values built to follow them — with wrong
kinds, absent names, strings where arrays belong, mappings and sequences that are no dict
or list, the frozen arguments' dict — both give the same answer after testing the same
strings in the same order (with ``required`` literals, the strings that hold one).
``compile_strings`` lists exactly the strings the chain would test, in that order.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import pytest

from raw_core.frozen import FrozenDict
from raw_core.policy._paths import PathStep
from raw_core.policy.predicate import chain_accessor, compile_accessor, compile_strings

NAMES = ["a", "b", "commands", 'it\'s "q"', "é", "__import__('os')", "\n", ""]


class Items(Sequence[Any]):
    """A sequence that is no list or tuple."""

    def __init__(self, items: list[Any]) -> None:
        self._items = items

    def __getitem__(self, index: Any) -> Any:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)


class Fields(Mapping[str, Any]):
    """A mapping that is no dict."""

    def __init__(self, fields: dict[str, Any]) -> None:
        self._fields = fields

    def __getitem__(self, key: str) -> Any:
        return self._fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)


class Sub(dict[str, Any]):
    pass


def frozen(fields: dict[str, Any]) -> FrozenDict:
    value = FrozenDict()
    dict.update(value, fields)
    return value


def random_path(rng: random.Random) -> tuple[PathStep, ...]:
    steps: list[PathStep] = [rng.choice(NAMES)]
    for _ in range(rng.randint(0, 10)):
        steps.append(None if rng.random() < 0.45 else rng.choice(NAMES))
    return tuple(steps)


def scalar(rng: random.Random) -> Any:
    return rng.choice(
        [None, True, 0, 1.5, "y", "yes", "n", "", b"y", bytearray(b"y"), "y\ud800", "x"]
    )


def value_for(rng: random.Random, steps: tuple[PathStep, ...]) -> Any:
    """A value that mostly follows ``steps``, sometimes not."""
    if rng.random() < 0.12:
        return scalar(rng) if rng.random() < 0.7 else rng.choice([[], {}, "yy", ("y",)])
    if not steps:
        return scalar(rng)
    step, rest = steps[0], steps[1:]
    if step is None:
        items = [value_for(rng, rest) for _ in range(rng.randint(0, 3))]
        kind = rng.choice([list, list, tuple, Items, "string"])
        if kind == "string":
            return "yy"  # a string where an array belongs: never split into characters
        return kind(items)  # type: ignore[operator]
    fields = {rng.choice(NAMES): value_for(rng, rest) for _ in range(rng.randint(0, 2))}
    if rng.random() < 0.7:
        fields[step] = value_for(rng, rest)
    kinds: list[Callable[[dict[str, Any]], Any]] = [dict, frozen, Sub, Fields, MappingProxyType]
    return rng.choice(kinds)(fields)


def recording(log: list[str]) -> Callable[[str], bool]:
    def test(text: str) -> bool:
        log.append(text)
        return text.startswith("y") and len(text) > 1

    return test


def listing(log: list[str]) -> Callable[[str], bool]:
    """A test that accepts nothing, so an accessor hands it every string at its path."""

    def test(text: str) -> bool:
        log.append(text)
        return False

    return test


@pytest.mark.parametrize("seed", range(3))
def test_the_generated_accessor_agrees_with_the_chain_of_closures(seed: int) -> None:
    rng = random.Random(seed)
    answers = {True: 0, False: 0}
    for _ in range(400):
        steps = random_path(rng)
        generated_log: list[str] = []
        chain_log: list[str] = []
        # "y" is in every string the test accepts, "e" and "y" too: both may be required.
        required = rng.choice([(), (), ("y",), ("e", "y")])
        generated = compile_accessor(steps, recording(generated_log), required)
        chain = chain_accessor(steps, recording(chain_log))
        for _ in range(15):
            value = value_for(rng, steps)
            generated_log.clear()
            chain_log.clear()
            expected = chain(value)
            assert generated(value) is expected, (steps, required, value)
            tested = [s for s in chain_log if not required or any(r in s for r in required)]
            assert generated_log == tested, (steps, required, value)
            answers[expected] += 1
    # both answers well exercised
    assert answers[True] > 200
    assert answers[False] > 200


@pytest.mark.parametrize("seed", range(3))
def test_the_strings_at_a_path_are_those_an_accessor_tests(seed: int) -> None:
    rng = random.Random(seed)
    found = 0
    tested: list[str] = []
    for _ in range(400):
        steps = random_path(rng)
        strings = compile_strings(steps)
        every = chain_accessor(steps, listing(tested))
        for _ in range(15):
            value = value_for(rng, steps)
            tested.clear()
            assert not every(value)
            assert strings(value) == tested, (steps, value)
            found += len(tested)
    assert found > 500  # many strings found, not only empty lists


@pytest.mark.parametrize(
    ("steps", "value", "expected"),
    [
        (("commands", None, "command"), {"commands": [{"command": "ls"}, {"command": "yes"}]}, 1),
        (("commands", None, "command"), {"commands": [{"command": "ls"}, {"cwd": "yes"}]}, 0),
        (("commands", None, "command"), {"commands": "yes"}, 0),
        (("commands", None, "command"), {"commands": [{"command": 7}, "yes", None]}, 0),
        (("a",), {"a": "yes"}, 1),
        (("a",), Fields({"a": "yes"}), 1),
        (("a", None), {"a": Items(["no", "yes"])}, 1),
        (("a", None), {"a": b"yes"}, 0),
        (("a", None, None), {"a": [["no"], ("yes",)]}, 1),
        (('it\'s "q"',), {'it\'s "q"': "yes"}, 1),
        (("__import__('os')",), {"__import__('os')": "yes"}, 1),
        (("a",), ["yes"], 0),
        (("a",), None, 0),
    ],
)
def test_accessors_on_chosen_values(steps: tuple[PathStep, ...], value: Any, expected: int) -> None:
    for build in (compile_accessor, chain_accessor):
        assert build(steps, recording([]))(value) is bool(expected)


def test_a_long_path_is_answered_too() -> None:
    steps: tuple[PathStep, ...] = ("a", None) * 12
    value: Any = "yes"
    for _ in range(12):
        value = {"a": [value]}
    assert compile_accessor(steps, recording([]))(value)
    assert not compile_accessor(steps, recording([]))({"a": [{"a": "yes"}]})
    assert compile_strings(steps)(value) == ["yes"]
    assert compile_strings(steps)({"a": [{"a": "yes"}]}) == []
