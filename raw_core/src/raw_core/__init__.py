"""raw_core: the tool contract of a local coding agent, as an embeddable library.

Public names are imported lazily (PEP 562), so ``import raw_core`` stays cheap for the
``raw`` command line.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from raw_core.agent import Agent, load_agent, open_agent
    from raw_core.app import App
    from raw_core.backend import (
        ApprovalAnswer,
        DisplayItem,
        DisplayPage,
        PendingRequest,
        SessionBackend,
        SessionInfo,
        SessionState,
    )
    from raw_core.calls import (
        ApprovalRequest,
        CallInfo,
        CallNext,
        CancellationSignal,
        CheckAnswer,
        Middleware,
        SkillReader,
        ToolCall,
        ToolContext,
        VarReader,
        Verdict,
    )
    from raw_core.config import (
        AgentConfig,
        BackendConfig,
        Config,
        ConfigSection,
        ModelConfig,
        Predicate,
        Rule,
        SecretRef,
        ToolsConfig,
        VarDefinition,
        load_config,
        parse_config,
    )
    from raw_core.discovery import find_config
    from raw_core.dispatch import Dispatcher
    from raw_core.errors import RawError
    from raw_core.frontend import BaseFrontEnd, CallbackFrontEnd, FrontEnd
    from raw_core.frozen import FrozenDict, freeze, thaw
    from raw_core.hookspecs import hookimpl, implements
    from raw_core.identity import ToolIdentity, parse_identity
    from raw_core.loader import LoadedTool, ToolLoader
    from raw_core.loop import Runtime, Session
    from raw_core.manifest import PanelAction, PanelDeclaration, ToolManifest, parse_manifest
    from raw_core.plugins import PluginHost, ToolFolder
    from raw_core.policy import Decision, Policy
    from raw_core.provider import ModelRequest, ModelTool, Provider, ProviderRecord
    from raw_core.registry import Registry, ToolDefinition, user_tools_dir
    from raw_core.results import BatchResult, ToolResult
    from raw_core.scripted import ReplayProvider, Reply, ScriptedProvider
    from raw_core.skills import Skill, SkillService
    from raw_core.sources import SourceContext, ToolSource, ToolSourceRecord
    from raw_core.store import SessionStore, SqliteBackend
    from raw_core.variables import VarService

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "implements": "raw_core.hookspecs",
    "CallNext": "raw_core.calls",
    "CheckAnswer": "raw_core.calls",
    "Middleware": "raw_core.calls",
    "SkillReader": "raw_core.calls",
    "VarReader": "raw_core.calls",

    "App": "raw_core.app",
    "ApprovalAnswer": "raw_core.backend",
    "DisplayItem": "raw_core.backend",
    "DisplayPage": "raw_core.backend",
    "PendingRequest": "raw_core.backend",
    "SessionBackend": "raw_core.backend",
    "SessionInfo": "raw_core.backend",
    "SessionState": "raw_core.backend",
    "BaseFrontEnd": "raw_core.frontend",
    "CallbackFrontEnd": "raw_core.frontend",
    "FrontEnd": "raw_core.frontend",
    "VarService": "raw_core.variables",
    "SkillService": "raw_core.skills",
    "Skill": "raw_core.skills",
    "find_config": "raw_core.discovery",
    "VarDefinition": "raw_core.config",
    "SecretRef": "raw_core.config",
    "Runtime": "raw_core.loop",
    "Session": "raw_core.loop",
    "ScriptedProvider": "raw_core.scripted",
    "ReplayProvider": "raw_core.scripted",
    "Reply": "raw_core.scripted",
    "ModelRequest": "raw_core.provider",
    "ModelTool": "raw_core.provider",
    "Provider": "raw_core.provider",
    "ProviderRecord": "raw_core.provider",
    "SessionStore": "raw_core.store",
    "SqliteBackend": "raw_core.store",
    "ApprovalRequest": "raw_core.calls",
    "CallInfo": "raw_core.calls",
    "CancellationSignal": "raw_core.calls",
    "ToolCall": "raw_core.calls",
    "ToolContext": "raw_core.calls",
    "Verdict": "raw_core.calls",
    "Dispatcher": "raw_core.dispatch",
    "FrozenDict": "raw_core.frozen",
    "freeze": "raw_core.frozen",
    "thaw": "raw_core.frozen",
    "Decision": "raw_core.policy",
    "Policy": "raw_core.policy",
    "BatchResult": "raw_core.results",
    "ToolResult": "raw_core.results",
    "Agent": "raw_core.agent",
    "load_agent": "raw_core.agent",
    "open_agent": "raw_core.agent",
    "BackendConfig": "raw_core.config",
    "ConfigSection": "raw_core.config",
    "SourceContext": "raw_core.sources",
    "ToolSource": "raw_core.sources",
    "ToolSourceRecord": "raw_core.sources",
    "AgentConfig": "raw_core.config",
    "Config": "raw_core.config",
    "ModelConfig": "raw_core.config",
    "Predicate": "raw_core.config",
    "Rule": "raw_core.config",
    "ToolsConfig": "raw_core.config",
    "load_config": "raw_core.config",
    "parse_config": "raw_core.config",
    "RawError": "raw_core.errors",
    "hookimpl": "raw_core.hookspecs",
    "ToolIdentity": "raw_core.identity",
    "parse_identity": "raw_core.identity",
    "LoadedTool": "raw_core.loader",
    "ToolLoader": "raw_core.loader",
    "PanelAction": "raw_core.manifest",
    "PanelDeclaration": "raw_core.manifest",
    "ToolManifest": "raw_core.manifest",
    "parse_manifest": "raw_core.manifest",
    "PluginHost": "raw_core.plugins",
    "ToolFolder": "raw_core.plugins",
    "Registry": "raw_core.registry",
    "ToolDefinition": "raw_core.registry",
    "user_tools_dir": "raw_core.registry",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'raw_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "Agent",
    "AgentConfig",
    "App",
    "ApprovalAnswer",
    "ApprovalRequest",
    "BackendConfig",
    "BaseFrontEnd",
    "BatchResult",
    "CallInfo",
    "CallNext",
    "CallbackFrontEnd",
    "CancellationSignal",
    "CheckAnswer",
    "Config",
    "ConfigSection",
    "Decision",
    "Dispatcher",
    "DisplayItem",
    "DisplayPage",
    "FrontEnd",
    "FrozenDict",
    "LoadedTool",
    "Middleware",
    "ModelConfig",
    "ModelRequest",
    "ModelTool",
    "PanelAction",
    "PanelDeclaration",
    "PendingRequest",
    "PluginHost",
    "Policy",
    "Predicate",
    "Provider",
    "ProviderRecord",
    "RawError",
    "Registry",
    "ReplayProvider",
    "Reply",
    "Rule",
    "Runtime",
    "ScriptedProvider",
    "SecretRef",
    "Session",
    "SessionBackend",
    "SessionInfo",
    "SessionState",
    "SessionStore",
    "Skill",
    "SkillReader",
    "SkillService",
    "SourceContext",
    "SqliteBackend",
    "ToolCall",
    "ToolContext",
    "ToolDefinition",
    "ToolFolder",
    "ToolIdentity",
    "ToolLoader",
    "ToolManifest",
    "ToolResult",
    "ToolSource",
    "ToolSourceRecord",
    "ToolsConfig",
    "VarDefinition",
    "VarReader",
    "VarService",
    "Verdict",
    "__version__",
    "find_config",
    "freeze",
    "hookimpl",
    "implements",
    "load_agent",
    "load_config",
    "open_agent",
    "parse_config",
    "parse_identity",
    "parse_manifest",
    "thaw",
    "user_tools_dir",
]
