"""The session service: the one composition of raw that every front end uses.

From a config, a plug-in host and options, :class:`App` builds the agent, its provider,
the session backend, the runtime and the one dispatcher factory, and offers the session
operations a front end needs: open or resume a session and run turns in it (streaming
their events, cancelling them), answer a pending request by id, list / page / follow /
delete / prune sessions, read a session's panels and run their actions, call one tool
through the full pipeline, explain a call, list what the model receives, and check a
model; :func:`validate_config` checks a config and every agent in it at once. The
reference CLI ``raw`` is one client of it; the ACP server and the dashboard are others.
See ``docs/how-to/embed.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core._lazy import lazy_exports
from raw_core.app._service import App

if TYPE_CHECKING:
    from raw_core.app._examples import ExampleRun
    from raw_core.app._explain import Explanation
    from raw_core.app._listing import ToolListing, tool_warnings
    from raw_core.app._probe import ModelCheck
    from raw_core.app._validate import ConfigReport, validate_config
    from raw_core.config.discovery import trust_folder, user_config_path
    from raw_core.sessions.blocks import (
        ImageBlock,
        JsonBlock,
        TextBlock,
        VarPlaceholder,
        block_to_dict,
    )
    from raw_core.sessions.messages import AssistantMessage, UserMessage
    from raw_core.tools.identity import RESERVED_SOURCES, SEGMENT_RE
    from raw_core.tools.interactions import check_answer

# Imported when first used (PEP 562): they bring the dispatcher and the providers' types.
# The rest are what a front end renders or checks without composing anything: the
# conversation's records, the user's config folder and trust, the identity grammar, and
# the check of an interaction answer against its form.
_LAZY = {
    "ExampleRun": "raw_core.app._examples",
    "Explanation": "raw_core.app._explain",
    "ToolListing": "raw_core.app._listing",
    "tool_warnings": "raw_core.app._listing",
    "ModelCheck": "raw_core.app._probe",
    "ConfigReport": "raw_core.app._validate",
    "validate_config": "raw_core.app._validate",
    "check_answer": "raw_core.tools.interactions",
    "trust_folder": "raw_core.config.discovery",
    "user_config_path": "raw_core.config.discovery",
    "AssistantMessage": "raw_core.sessions.messages",
    "ImageBlock": "raw_core.sessions.blocks",
    "JsonBlock": "raw_core.sessions.blocks",
    "TextBlock": "raw_core.sessions.blocks",
    "UserMessage": "raw_core.sessions.messages",
    "VarPlaceholder": "raw_core.sessions.blocks",
    "block_to_dict": "raw_core.sessions.blocks",
    "RESERVED_SOURCES": "raw_core.tools.identity",
    "SEGMENT_RE": "raw_core.tools.identity",
}


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)


__all__ = [
    "RESERVED_SOURCES",
    "SEGMENT_RE",
    "App",
    "AssistantMessage",
    "ConfigReport",
    "ExampleRun",
    "Explanation",
    "ImageBlock",
    "JsonBlock",
    "ModelCheck",
    "TextBlock",
    "ToolListing",
    "UserMessage",
    "VarPlaceholder",
    "block_to_dict",
    "check_answer",
    "tool_warnings",
    "trust_folder",
    "user_config_path",
    "validate_config",
]
