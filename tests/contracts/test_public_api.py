"""Each package's public API is what its ``__all__`` says, and every name resolves."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

PACKAGES = [
    "raw_core",
    "raw_builtin_tools",
    "raw_builtin_tools.toolkit",
    "raw_providers",
    "raw_store_postgres",
    "raw_core.errors",
    "raw_core.config",
    "raw_core.tools.manifest",
    "raw_core.tools.loader",
    "raw_core.tools.registry",
    "raw_core.tools.sources",
    "raw_core.plugins",
    "raw_core.tools.identity",
    "raw_core.agent",
    "raw_core.app",
    "raw_core.sessions.backend",
    "raw_core.runtime.frontend",
    "raw_core.runtime.approvals",
    "raw_core.plugins.hookspecs",
    "raw_core.policy",
    "raw_core.policy.predicate",
    "raw_core.dispatch",
    "raw_core.tools.calls",
    "raw_core.tools.results",
    "raw_core.tools.panels",
    "raw_core.tools.resources",
    "raw_core.tools.panel_blocks",
    "raw_core.runtime.panels",
    "raw_core.frozen",
    "raw_core.plugins.hooks",
    "raw_core.hooks",
    "raw_core.sessions.sqlite",
    "raw_core.runtime.loop",
    "raw_core.providers.contract",
    "raw_core.providers.scripted",
    "raw_core.runtime.events",
    "raw_core.agent.skills",
    "raw_core.agent.variables",
    "raw_core.config.discovery",
    "raw_core.runtime.models",
    "raw_core.packages",
    "raw_mcp",
    "raw_acp",
    "raw_dashboard",
]

# The packages whose public names are imported on first use (raw_core.lazy_exports).
LAZY_PACKAGES = [
    "raw_core",
    "raw_builtin_tools.toolkit",
    "raw_providers",
    "raw_store_postgres",
    "raw_mcp",
    "raw_acp",
    "raw_dashboard",
    "raw_core.config",
    "raw_core.policy",
    "raw_core.dispatch",
    "raw_core.providers",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_every_name_in_all_resolves(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert len(exported) == len(set(exported))
    for attribute in exported:
        assert getattr(module, attribute) is not None, f"{name}.{attribute}"


def test_importing_raw_core_loads_no_plugin_and_no_heavy_module() -> None:
    code = (
        "import sys, raw_core\n"
        "heavy = [m for m in ('raw_builtin_tools', 'fastjsonschema', 're2', 'cattrs',"
        " 'pluggy', 'click') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_importing_the_app_module_a_front_end_starts_with_stays_light() -> None:
    """``import raw_core.app`` imports neither the config, the plug-in host, anyio nor
    attrs: a front end pays for them when it opens a service, not when it starts."""
    code = (
        "import sys, raw_core.app\n"
        "heavy = [m for m in ('raw_core.config', 'raw_core.plugins', 'raw_core.sessions',"
        " 'anyio', 'attrs', 'pluggy', 'cattrs', 'fastjsonschema', 're2') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_raw_core_does_not_import_the_other_distributions() -> None:
    code = (
        "import sys\n"
        "import raw_core.agent, raw_core.tools.registry, raw_core.cli\n"
        "print(','.join(m for m in ('raw_builtin_tools', 'raw_providers', 'raw_store_postgres')"
        " if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_unknown_attribute_raises_attribute_error() -> None:
    import raw_core

    with pytest.raises(AttributeError):
        _ = raw_core.no_such_name  # type: ignore[attr-defined]  # a checker sees it too


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_a_lazy_package_names_its_unknown_attribute_and_lists_its_names(name: str) -> None:
    module = importlib.import_module(name)
    with pytest.raises(AttributeError, match=f"module '{name}' has no attribute 'no_such_name'"):
        getattr(module, "no_such_name")  # noqa: B009
    assert set(module.__all__) <= set(dir(module))


# The public facade, pinned: a name added, removed or renamed here is a change of raw's
# public API, and must be made on purpose (with this list, the docs and a note).
FACADE = frozenset(
    {
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
        "CallInteractions",
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
        "LoadedHook",
        "LoadedTool",
        "Middleware",
        "ModelConfig",
        "ModelRequest",
        "ModelTool",
        "PanelAction",
        "PanelActionResult",
        "PanelDeclaration",
        "PanelUpdate",
        "PanelView",
        "InteractionAnswer",
        "InteractionRequest",
        "PendingRequest",
        "RequestEntry",
        "RequestState",
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
        "hookimpl",
        "implements",
        "lazy_exports",
        "load_agent",
        "load_config",
        "load_hook",
        "open_agent",
        "parse_config",
        "parse_identity",
        "parse_manifest",
        "thaw",
        "user_hooks_dir",
        "user_tools_dir",
        "PackageManifest",
        "PackageSource",
        "PackageStore",
        "gc_packages",
        "install_package",
        "list_packages",
        "remove_package",
        "show_package",
    }
)


def test_the_facade_exports_exactly_its_pinned_names() -> None:
    exported = set(importlib.import_module("raw_core").__all__)
    assert sorted(exported - FACADE) == [], "new public names: pin them here on purpose"
    assert sorted(FACADE - exported) == [], "public names gone: that breaks users' imports"
