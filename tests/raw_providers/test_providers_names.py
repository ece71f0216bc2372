"""Wire names: a name the services reject travels as a safe, deterministic alias and back."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raw_providers._names import WireNames, is_wire_safe, wire_alias

SAFE = re.compile(r"[A-Za-z0-9_-]{1,64}")


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("read_file", True),
        ("a-b_C9", True),
        ("x" * 64, True),
        ("x" * 65, False),
        ("mcp/github/search", False),
        ("has space", False),
        ("dotted.name", False),
        ("ünïcode", False),
        ("", False),
    ],
    ids=lambda value: repr(value)[:20],
)
def test_what_the_services_accept(name: str, safe: bool) -> None:
    assert is_wire_safe(name) is safe


def test_an_alias_is_readable_and_tagged() -> None:
    alias = wire_alias("mcp/github/search_issues")
    assert re.fullmatch(r"mcp_github_search_issues_[0-9a-f]{8}", alias)


def test_the_table_keeps_safe_names_and_maps_aliases_back() -> None:
    names = WireNames(["read_file", "mcp/a/b", "mcp/a_b"])
    assert names.to_wire("read_file") == "read_file"
    first, second = names.to_wire("mcp/a/b"), names.to_wire("mcp/a_b")
    assert first != second
    assert names.from_wire(first) == "mcp/a/b"
    assert names.from_wire(second) == "mcp/a_b"
    assert names.from_wire("unknown_tool") == "unknown_tool"
    assert names.aliased == {"mcp/a/b": first, "mcp/a_b": second}


def test_an_alias_never_takes_a_real_tools_name() -> None:
    taken = wire_alias("a/b")
    names = WireNames([taken, "a/b"])
    assert names.to_wire(taken) == taken
    assert names.to_wire("a/b") != taken
    assert names.from_wire(names.to_wire("a/b")) == "a/b"


@given(st.lists(st.text(min_size=1, max_size=90), min_size=1, max_size=8, unique=True))
def test_every_name_round_trips_through_a_safe_unique_wire_name(names: list[str]) -> None:
    table = WireNames(names)
    wires = [table.to_wire(name) for name in names]
    assert all(SAFE.fullmatch(wire) for wire in wires)
    assert len(set(wires)) == len(wires)
    assert [table.from_wire(wire) for wire in wires] == names
    assert wires == [WireNames(names).to_wire(name) for name in names]  # deterministic
