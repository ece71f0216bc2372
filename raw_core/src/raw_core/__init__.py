"""raw_core: the tool contract of a local coding agent, as an embeddable library.

Public names are imported lazily (PEP 562), so ``import raw_core`` stays cheap for the
``raw`` command line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core._lazy import lazy_exports

if TYPE_CHECKING:
    from raw_core.agent import Agent, load_agent, open_agent
    from raw_core.agent.skills import Skill, SkillService
    from raw_core.agent.variables import VarService
    from raw_core.app import App
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
    from raw_core.config.discovery import find_config
    from raw_core.dispatch import Dispatcher
    from raw_core.errors import RawError
    from raw_core.frozen import FrozenDict, freeze, thaw
    from raw_core.hooks import LoadedHook, load_hook, user_hooks_dir
    from raw_core.packages import (
        PackageManifest,
        PackageSource,
        PackageStore,
        gc_packages,
        install_package,
        list_packages,
        remove_package,
        show_package,
    )
    from raw_core.plugins import PluginHost, ToolFolder
    from raw_core.plugins.hookspecs import hookimpl, implements
    from raw_core.policy import Decision, Policy
    from raw_core.providers.contract import ModelRequest, ModelTool, Provider, ProviderRecord
    from raw_core.providers.scripted import ReplayProvider, Reply, ScriptedProvider
    from raw_core.runtime import Runtime, Session
    from raw_core.runtime.frontend import BaseFrontEnd, CallbackFrontEnd, FrontEnd
    from raw_core.runtime.panels import PanelActionResult
    from raw_core.sessions.backend import (
        ApprovalAnswer,
        DisplayItem,
        DisplayPage,
        InteractionAnswer,
        PanelUpdate,
        PendingRequest,
        RequestEntry,
        RequestState,
        SessionBackend,
        SessionInfo,
        SessionState,
    )
    from raw_core.sessions.sqlite import SessionStore, SqliteBackend
    from raw_core.tools.calls import (
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
    from raw_core.tools.identity import ToolIdentity, parse_identity
    from raw_core.tools.interactions import CallInteractions, InteractionRequest
    from raw_core.tools.loader import LoadedTool, ToolLoader
    from raw_core.tools.manifest import PanelAction, PanelDeclaration, ToolManifest, parse_manifest
    from raw_core.tools.panels import CallPanels, PanelView
    from raw_core.tools.registry import Registry, ToolDefinition, user_tools_dir
    from raw_core.tools.resources import SessionResources
    from raw_core.tools.results import BatchResult, ToolResult
    from raw_core.tools.sources import SourceContext, ToolSource, ToolSourceRecord

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "PackageManifest": "raw_core.packages",
    "PackageSource": "raw_core.packages",
    "PackageStore": "raw_core.packages",
    "gc_packages": "raw_core.packages",
    "install_package": "raw_core.packages",
    "list_packages": "raw_core.packages",
    "remove_package": "raw_core.packages",
    "show_package": "raw_core.packages",
    "implements": "raw_core.plugins.hookspecs",
    "CallNext": "raw_core.tools.calls",
    "CheckAnswer": "raw_core.tools.calls",
    "Middleware": "raw_core.tools.calls",
    "SkillReader": "raw_core.tools.calls",
    "VarReader": "raw_core.tools.calls",
    "App": "raw_core.app",
    "ApprovalAnswer": "raw_core.sessions.backend",
    "DisplayItem": "raw_core.sessions.backend",
    "DisplayPage": "raw_core.sessions.backend",
    "PendingRequest": "raw_core.sessions.backend",
    "InteractionAnswer": "raw_core.sessions.backend",
    "RequestEntry": "raw_core.sessions.backend",
    "RequestState": "raw_core.sessions.backend",
    "InteractionRequest": "raw_core.tools.interactions",
    "CallInteractions": "raw_core.tools.interactions",
    "SessionBackend": "raw_core.sessions.backend",
    "SessionInfo": "raw_core.sessions.backend",
    "SessionState": "raw_core.sessions.backend",
    "BaseFrontEnd": "raw_core.runtime.frontend",
    "CallbackFrontEnd": "raw_core.runtime.frontend",
    "FrontEnd": "raw_core.runtime.frontend",
    "VarService": "raw_core.agent.variables",
    "SkillService": "raw_core.agent.skills",
    "Skill": "raw_core.agent.skills",
    "find_config": "raw_core.config.discovery",
    "VarDefinition": "raw_core.config",
    "SecretRef": "raw_core.config",
    "Runtime": "raw_core.runtime._runtime",
    "Session": "raw_core.runtime.loop",
    "ScriptedProvider": "raw_core.providers.scripted",
    "ReplayProvider": "raw_core.providers.scripted",
    "Reply": "raw_core.providers.scripted",
    "ModelRequest": "raw_core.providers.contract",
    "ModelTool": "raw_core.providers.contract",
    "Provider": "raw_core.providers.contract",
    "ProviderRecord": "raw_core.providers.contract",
    "SessionStore": "raw_core.sessions.sqlite",
    "SqliteBackend": "raw_core.sessions.sqlite",
    "ApprovalRequest": "raw_core.tools.calls",
    "CallInfo": "raw_core.tools.calls",
    "CancellationSignal": "raw_core.tools.calls",
    "ToolCall": "raw_core.tools.calls",
    "ToolContext": "raw_core.tools.calls",
    "SessionResources": "raw_core.tools.resources",
    "Verdict": "raw_core.tools.calls",
    "Dispatcher": "raw_core.dispatch",
    "FrozenDict": "raw_core.frozen",
    "freeze": "raw_core.frozen",
    "thaw": "raw_core.frozen",
    "Decision": "raw_core.policy",
    "Policy": "raw_core.policy",
    "BatchResult": "raw_core.tools.results",
    "ToolResult": "raw_core.tools.results",
    "Agent": "raw_core.agent",
    "load_agent": "raw_core.agent",
    "load_hook": "raw_core.hooks",
    "open_agent": "raw_core.agent",
    "BackendConfig": "raw_core.config",
    "ConfigSection": "raw_core.config",
    "SourceContext": "raw_core.tools.sources",
    "ToolSource": "raw_core.tools.sources",
    "ToolSourceRecord": "raw_core.tools.sources",
    "AgentConfig": "raw_core.config",
    "Config": "raw_core.config",
    "ModelConfig": "raw_core.config",
    "Predicate": "raw_core.config",
    "Rule": "raw_core.config",
    "ToolsConfig": "raw_core.config",
    "load_config": "raw_core.config",
    "parse_config": "raw_core.config",
    "RawError": "raw_core.errors",
    "hookimpl": "raw_core.plugins.hookspecs",
    "ToolIdentity": "raw_core.tools.identity",
    "parse_identity": "raw_core.tools.identity",
    "LoadedHook": "raw_core.hooks",
    "LoadedTool": "raw_core.tools.loader",
    "ToolLoader": "raw_core.tools.loader",
    "PanelAction": "raw_core.tools.manifest",
    "PanelActionResult": "raw_core.runtime.panels",
    "PanelUpdate": "raw_core.sessions.backend",
    "PanelView": "raw_core.tools.panels",
    "CallPanels": "raw_core.tools.panels",
    "PanelDeclaration": "raw_core.tools.manifest",
    "ToolManifest": "raw_core.tools.manifest",
    "parse_manifest": "raw_core.tools.manifest",
    "PluginHost": "raw_core.plugins",
    "ToolFolder": "raw_core.plugins",
    "Registry": "raw_core.tools.registry",
    "ToolDefinition": "raw_core.tools.registry",
    "user_hooks_dir": "raw_core.hooks",
    "user_tools_dir": "raw_core.tools.registry",
}


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


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
    "CallInteractions",
    "CallNext",
    "CallPanels",
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
    "InteractionAnswer",
    "InteractionRequest",
    "LoadedHook",
    "LoadedTool",
    "Middleware",
    "ModelConfig",
    "ModelRequest",
    "ModelTool",
    "PackageManifest",
    "PackageSource",
    "PackageStore",
    "PanelAction",
    "PanelActionResult",
    "PanelDeclaration",
    "PanelUpdate",
    "PanelView",
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
    "RequestEntry",
    "RequestState",
    "Rule",
    "Runtime",
    "ScriptedProvider",
    "SecretRef",
    "Session",
    "SessionBackend",
    "SessionInfo",
    "SessionResources",
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
    "gc_packages",
    "hookimpl",
    "implements",
    "install_package",
    "lazy_exports",
    "list_packages",
    "load_agent",
    "load_config",
    "load_hook",
    "open_agent",
    "parse_config",
    "parse_identity",
    "parse_manifest",
    "remove_package",
    "show_package",
    "thaw",
    "user_hooks_dir",
    "user_tools_dir",
]
