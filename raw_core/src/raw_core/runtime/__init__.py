"""The runtime: the agent loop, its events, making an agent's provider, approvals and the
front-end protocol. The provider contract itself is :mod:`raw_core.providers`.

Public names are imported lazily (PEP 562): importing the package imports none of
its modules, so a module of it can be imported without the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core._lazy import lazy_exports

if TYPE_CHECKING:
    from raw_core.runtime._runtime import Runtime
    from raw_core.runtime.approvals import (
        ApprovalBroker,
    )
    from raw_core.runtime.events import (
        ApprovalAnswered,
        ApprovalRequested,
        AssistantCommitted,
        CompactionEnded,
        CompactionStarted,
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
    "CompactionEnded": "raw_core.runtime.events",
    "CompactionStarted": "raw_core.runtime.events",
    "CallbackFrontEnd": "raw_core.runtime.frontend",
    "CredentialStatus": "raw_core.runtime.models",
    "FrontEnd": "raw_core.runtime.frontend",
    "LoopEvent": "raw_core.runtime.events",
    "Runtime": "raw_core.runtime._runtime",
    "RuntimeChanged": "raw_core.runtime.events",
    "Session": "raw_core.runtime.loop",
    "ToolCallFinished": "raw_core.runtime.events",
    "ToolCallStarted": "raw_core.runtime.events",
    "TurnEnded": "raw_core.runtime.events",
    "TurnStarted": "raw_core.runtime.events",
    "Usage": "raw_core.runtime.events",
    "VarResolver": "raw_core.runtime.loop",
    "credential_status": "raw_core.runtime.models",
    "make_provider": "raw_core.runtime.models",
    "resolve_credential": "raw_core.runtime.models",
}


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


__all__ = [
    "ApprovalAnswered",
    "ApprovalBroker",
    "ApprovalRequested",
    "AssistantCommitted",
    "BaseFrontEnd",
    "CallbackFrontEnd",
    "CompactionEnded",
    "CompactionStarted",
    "CredentialStatus",
    "FrontEnd",
    "LoopEvent",
    "Runtime",
    "RuntimeChanged",
    "Session",
    "ToolCallFinished",
    "ToolCallStarted",
    "TurnEnded",
    "TurnStarted",
    "Usage",
    "VarResolver",
    "credential_status",
    "make_provider",
    "resolve_credential",
]
