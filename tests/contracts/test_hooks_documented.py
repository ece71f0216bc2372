"""Every hookspec has a section in docs/reference/hooks.md, and nothing else does; the
host's typed relay names every hookspec."""

from __future__ import annotations

import re
from pathlib import Path

import pluggy

from raw_core.plugins import HookRelay, PluginHost, hookspecs

DOC = Path(__file__).parents[2] / "docs" / "reference" / "hooks.md"


def specified_hooks() -> set[str]:
    marker = f"{hookspecs.PROJECT_NAME}_spec"
    return {name for name in dir(hookspecs) if hasattr(getattr(hookspecs, name), marker)}


def test_every_hookspec_is_documented() -> None:
    documented = set(
        re.findall(r"^### (raw_[a-z_]+)$", DOC.read_text(encoding="utf-8"), flags=re.M)
    )
    assert specified_hooks() == documented


def test_hook_names_are_prefixed_raw() -> None:
    assert specified_hooks()
    assert all(name.startswith("raw_") for name in specified_hooks())


def test_the_host_knows_every_hookspec() -> None:
    host = PluginHost()
    for name in specified_hooks():
        caller = getattr(host.hook, name)
        assert isinstance(caller, pluggy.HookCaller)
        assert caller.has_spec()


def test_the_typed_relay_names_every_hookspec() -> None:
    assert set(HookRelay.__annotations__) == specified_hooks()
