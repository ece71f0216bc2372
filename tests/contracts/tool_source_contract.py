"""The contract every tool source passes (raw_core.tools.sources.ToolSource).

Reusable: a source's test module subclasses :class:`ToolSourceContract` and provides the
fixture ``tool_source_case``, a :class:`ToolSourceCase`: a factory of fresh, unopened
sources, an identity the source resolves and one of its prefix that it does not have.
The fixture cleans up what it made. For example::

    class TestMcpSource(ToolSourceContract):
        @pytest.fixture
        def tool_source_case(self, server) -> ToolSourceCase:
            return ToolSourceCase(
                make_source=lambda: McpSource(...),
                known="mcp/github/search",
                unknown="mcp/github/no_such_tool",
            )

Every test opens and closes the sources it uses, as a session does, and bounds each step
with ``anyio.fail_after`` so that a broken source fails instead of hanging.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
import attrs
import pytest

from raw_core.errors import RawError
from raw_core.tools.identity import parse_identity
from raw_core.tools.loader import LoadedTool
from raw_core.tools.sources import SyncToolSource, ToolSource

__all__ = ["ToolSourceCase", "ToolSourceContract"]

STEP_TIMEOUT = 30.0


@attrs.frozen(kw_only=True)
class ToolSourceCase:
    """What a source's contract run needs: ``make_source()`` builds a fresh, unopened
    source; ``known`` is an identity it resolves, ``unknown`` one of its prefix it lacks."""

    make_source: Callable[[], ToolSource]
    known: str
    unknown: str


@asynccontextmanager
async def opened(source: ToolSource) -> AsyncIterator[ToolSource]:
    """Open ``source`` for the block and close it after, as a session does."""
    with anyio.fail_after(STEP_TIMEOUT):
        await source.open()
    try:
        yield source
    finally:
        with anyio.fail_after(STEP_TIMEOUT, shield=True):
            await source.close()


async def resolve(source: ToolSource, identity: str) -> LoadedTool:
    with anyio.fail_after(STEP_TIMEOUT):
        return await source.resolve(parse_identity(identity))


@pytest.mark.anyio
class ToolSourceContract:
    """Subclass and provide the ``tool_source_case`` fixture."""

    @pytest.fixture
    def anyio_backend(self) -> str:
        return "asyncio"

    async def test_the_prefix_is_the_identities_first_segment(
        self, tool_source_case: ToolSourceCase
    ) -> None:
        source = tool_source_case.make_source()
        assert isinstance(source, ToolSource)
        assert source.prefix == parse_identity(tool_source_case.known).source
        assert source.prefix == parse_identity(tool_source_case.unknown).source

    async def test_an_opened_source_resolves_a_loaded_tool_of_that_identity(
        self, tool_source_case: ToolSourceCase
    ) -> None:
        async with opened(tool_source_case.make_source()) as source:
            tool = await resolve(source, tool_source_case.known)
        assert isinstance(tool, LoadedTool)
        assert tool.identity == tool_source_case.known
        assert tool.name
        assert tool.description
        assert callable(tool.handler)

    async def test_an_unknown_identity_is_tool_not_found_naming_it(
        self, tool_source_case: ToolSourceCase
    ) -> None:
        async with opened(tool_source_case.make_source()) as source:
            with pytest.raises(RawError) as caught:
                await resolve(source, tool_source_case.unknown)
        assert caught.value.code == "tool_not_found"
        assert caught.value.context.get("tool") == tool_source_case.unknown
        assert tool_source_case.unknown in caught.value.message

    async def test_resolving_twice_gives_the_same_tool(
        self, tool_source_case: ToolSourceCase
    ) -> None:
        async with opened(tool_source_case.make_source()) as source:
            first = await resolve(source, tool_source_case.known)
            second = await resolve(source, tool_source_case.known)
        assert (first.name, first.folder, first.manifest) == (
            second.name,
            second.folder,
            second.manifest,
        )

    async def test_a_source_opened_and_closed_unused_is_fine(
        self, tool_source_case: ToolSourceCase
    ) -> None:
        async with opened(tool_source_case.make_source()):
            pass

    async def test_each_session_gets_a_working_source(
        self, tool_source_case: ToolSourceCase
    ) -> None:
        for _ in range(2):
            async with opened(tool_source_case.make_source()) as source:
                tool = await resolve(source, tool_source_case.known)
            assert tool.identity == tool_source_case.known

    async def test_a_synchronous_load_matches_resolve(
        self, tool_source_case: ToolSourceCase
    ) -> None:
        source = tool_source_case.make_source()
        if not isinstance(source, SyncToolSource):
            pytest.skip("the source is asynchronous only")
        loaded = source.load(parse_identity(tool_source_case.known))
        async with opened(source):
            resolved = await resolve(source, tool_source_case.known)
        assert (loaded.identity, loaded.name, loaded.folder) == (
            resolved.identity,
            resolved.name,
            resolved.folder,
        )
        with pytest.raises(RawError) as caught:
            source.load(parse_identity(tool_source_case.unknown))
        assert caught.value.code == "tool_not_found"
