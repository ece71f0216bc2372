"""Frozen JSON values: read like dicts and lists, serialize, and refuse every change."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raw_core.frozen import FrozenDict, freeze, thaw

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=25,
)


@given(json_values)
def test_freeze_then_thaw_round_trips_and_serializes_the_same(value: Any) -> None:
    frozen = freeze(value)
    assert thaw(frozen) == value
    assert json.dumps(frozen, sort_keys=True) == json.dumps(value, sort_keys=True)


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param(lambda d: d.__setitem__("a", 2), id="setitem"),
        pytest.param(lambda d: d.__delitem__("a"), id="delitem"),
        pytest.param(lambda d: d.update(b=1), id="update"),
        pytest.param(lambda d: d.pop("a"), id="pop"),
        pytest.param(lambda d: d.popitem(), id="popitem"),
        pytest.param(lambda d: d.setdefault("z", 1), id="setdefault"),
        pytest.param(lambda d: d.clear(), id="clear"),
        pytest.param(lambda d: d.__ior__({"b": 1}), id="ior"),
    ],
)
def test_every_mutation_is_refused(mutate: Any) -> None:
    frozen = freeze({"a": 1})
    with pytest.raises(TypeError, match="frozen"):
        mutate(frozen)
    assert frozen == {"a": 1}


def test_nested_values_are_frozen_too() -> None:
    frozen = freeze({"files": [{"path": "a"}]})
    assert isinstance(frozen["files"], tuple)
    assert isinstance(frozen["files"][0], FrozenDict)
    with pytest.raises(TypeError):
        frozen["files"][0]["path"] = "b"


def test_copies_are_the_same_object_and_thaw_detaches() -> None:
    frozen = freeze({"a": [1]})
    assert copy.copy(frozen) is frozen
    assert copy.deepcopy(frozen) is frozen
    thawed = thaw(frozen)
    thawed["a"].append(2)
    assert frozen == {"a": (1,)}


def test_pickling_keeps_it_frozen() -> None:
    restored = pickle.loads(pickle.dumps(freeze({"a": {"b": 1}})))
    assert isinstance(restored, FrozenDict)
    with pytest.raises(TypeError):
        restored["a"] = 1


def test_freeze_copies_mapping_and_sequence_subclasses_too() -> None:
    from collections import OrderedDict

    class Items(list[Any]):
        pass

    frozen = freeze(OrderedDict(a=Items([{"b": [1]}])))
    assert type(frozen) is FrozenDict
    assert frozen == {"a": ({"b": (1,)},)}
    assert type(frozen["a"]) is tuple
    assert type(frozen["a"][0]) is FrozenDict
    already = freeze({"x": 1})
    assert freeze(already) is already
