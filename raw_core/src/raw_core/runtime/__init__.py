"""The runtime: the agent loop, its events, model providers, approvals and the front-end
protocol.

Public names are imported lazily (PEP 562): importing the package imports none of
its modules, so a module of it can be imported without the others.

Names two of its modules define (TextDelta) are not
re-exported: import them from their module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core._lazy import lazy_exports

if TYPE_CHECKING:
    from raw_core.providers.contract import (
        ModelRequest,
        ModelTool,
        PartEvent,
        Provider,
        ProviderEvent,
        ProviderFactory,
        ProviderRecord,
        StopEvent,
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
    from raw_core.runtime._runtime import Runtime
    from raw_core.runtime.approvals import (
        ApprovalBroker,
    )
    from raw_core.runtime.events import (
        ApprovalAnswered,
        ApprovalRequested,
        AssistantCommitted,
        LoopEvent,
        RuntimeChanged,
        ToolCallFinished,
        ToolCallStarted,
        TurnEnded,
        TurnStarted,
        Usage,
    )
    from raw_core.runtime.frontend import (
        BaseFrontEnd,
        CallbackFrontEnd,
        FrontEnd,
    )
    from raw_core.runtime.loop import (
        Session,
        VarResolver,
    )
    from raw_core.runtime.models import (
        CredentialStatus,
        credential_status,
        make_provider,
        resolve_credential,
    )

_EXPORTS: dict[str, str] = {
    "ApprovalAnswered": "raw_core.runtime.events",
    "ApprovalBroker": "raw_core.runtime.approvals",
    "ApprovalRequested": "raw_core.runtime.events",
    "AssistantCommitted": "raw_core.runtime.events",
    "BaseFrontEnd": "raw_core.runtime.frontend",
    "CallbackFrontEnd": "raw_core.runtime.frontend",
    "CredentialStatus": "raw_core.runtime.models",
    "FrontEnd": "raw_core.runtime.frontend",
    "LoopEvent": "raw_core.runtime.events",
    "ModelRequest": "raw_core.providers.contract",
    "ModelTool": "raw_core.providers.contract",
    "PartEvent": "raw_core.providers.contract",
    "Provider": "raw_core.providers.contract",
    "ProviderEvent": "raw_core.providers.contract",
    "ProviderFactory": "raw_core.providers.contract",
    "ProviderRecord": "raw_core.providers.contract",
    "ReplayProvider": "raw_core.providers.scripted",
    "Reply": "raw_core.providers.scripted",
    "Runtime": "raw_core.runtime._runtime",
    "RuntimeChanged": "raw_core.runtime.events",
    "ScriptedProvider": "raw_core.providers.scripted",
    "Session": "raw_core.runtime.loop",
    "StopEvent": "raw_core.providers.contract",
    "ToolCallDelta": "raw_core.providers.contract",
    "ToolCallEnd": "raw_core.providers.contract",
    "ToolCallFinished": "raw_core.runtime.events",
    "ToolCallStart": "raw_core.providers.contract",
    "ToolCallStarted": "raw_core.runtime.events",
    "TurnEnded": "raw_core.runtime.events",
    "TurnStarted": "raw_core.runtime.events",
    "Usage": "raw_core.runtime.events",
    "UsageEvent": "raw_core.providers.contract",
    "VarResolver": "raw_core.runtime.loop",
    "credential_status": "raw_core.runtime.models",
    "make_provider": "raw_core.runtime.models",
    "prompt_cache_key": "raw_core.providers.contract",
    "replay_provider_record": "raw_core.providers.scripted",
    "resolve_credential": "raw_core.runtime.models",
}


__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


__all__ = [
    "ApprovalAnswered",
    "ApprovalBroker",
    "ApprovalRequested",
    "AssistantCommitted",
    "BaseFrontEnd",
    "CallbackFrontEnd",
    "CredentialStatus",
    "FrontEnd",
    "LoopEvent",
    "ModelRequest",
    "ModelTool",
    "PartEvent",
    "Provider",
    "ProviderEvent",
    "ProviderFactory",
    "ProviderRecord",
    "ReplayProvider",
    "Reply",
    "Runtime",
    "RuntimeChanged",
    "ScriptedProvider",
    "Session",
    "StopEvent",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallFinished",
    "ToolCallStart",
    "ToolCallStarted",
    "TurnEnded",
    "TurnStarted",
    "Usage",
    "UsageEvent",
    "VarResolver",
    "credential_status",
    "make_provider",
    "prompt_cache_key",
    "replay_provider_record",
    "resolve_credential",
]
