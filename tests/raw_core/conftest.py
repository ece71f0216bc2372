"""Fixtures shared by raw_core's tests."""

from __future__ import annotations

import pytest

from raw_core.plugins import PluginHost


@pytest.fixture
def host() -> PluginHost:
    """A plug-in host with the built-in tools alone (no entry points scanned)."""
    from raw_builtin_tools import plugin

    only_builtin = PluginHost()
    only_builtin.register(plugin, name="builtin")
    return only_builtin
