"""The model-provider contract: what a request holds, the events a provider streams, how a
provider plug-in is registered, and raw's own scripted and replay providers.
Implementations of real services come from plug-ins (raw-providers).

Public names are imported lazily (PEP 562): importing the package imports none of
its modules, so a module of it can be imported without the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core._lazy import lazy_exports

if TYPE_CHECKING:
    from raw_core.providers.contract import (
        ModelCheck,
        ModelRequest,
        ModelTool,
        PartEvent,
        Provider,
        ProviderEvent,
        ProviderFactory,
        ProviderRecord,
        StopEvent,
        TextDelta,
        ToolCallDelta,
        ToolCallEnd,
        ToolCallStart,
        UsageEvent,
        prompt_cache_key,
    )
    from raw_core.providers.scripted import (
        ReplayProvider,
        Reply,
        ScriptedProvider,
        replay_provider_record,
    )

_EXPORTS: dict[str, str] = {
    "ModelCheck": "raw_core.providers.contract",
    "ModelRequest": "raw_core.providers.contract",
    "ModelTool": "raw_core.providers.contract",
    "PartEvent": "raw_core.providers.contract",
    "Provider": "raw_core.providers.contract",
    "ProviderEvent": "raw_core.providers.contract",
    "ProviderFactory": "raw_core.providers.contract",
    "ProviderRecord": "raw_core.providers.contract",
    "ReplayProvider": "raw_core.providers.scripted",
    "Reply": "raw_core.providers.scripted",
    "ScriptedProvider": "raw_core.providers.scripted",
    "StopEvent": "raw_core.providers.contract",
    "TextDelta": "raw_core.providers.contract",
    "ToolCallDelta": "raw_core.providers.contract",
    "ToolCallEnd": "raw_core.providers.contract",
    "ToolCallStart": "raw_core.providers.contract",
    "UsageEvent": "raw_core.providers.contract",
    "prompt_cache_key": "raw_core.providers.contract",
    "replay_provider_record": "raw_core.providers.scripted",
}


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


__all__ = [
    "ModelCheck",
    "ModelRequest",
    "ModelTool",
    "PartEvent",
    "Provider",
    "ProviderEvent",
    "ProviderFactory",
    "ProviderRecord",
    "ReplayProvider",
    "Reply",
    "ScriptedProvider",
    "StopEvent",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "UsageEvent",
    "prompt_cache_key",
    "replay_provider_record",
]
