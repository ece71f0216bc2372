"""Configuration: the config file's records, how it is parsed and checked, and where it is
found.

Public names are imported lazily (PEP 562): importing the package imports none of
its modules, so a module of it can be imported without the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core._lazy import lazy_exports

if TYPE_CHECKING:
    from raw_core.config._model import (
        CORE_SECTIONS,
        DEFAULT_HANDLER_TIMEOUT_MS,
        DEFAULT_HOOK_TIMEOUT_MS,
        DEFAULT_MAX_OUTPUT_BYTES,
        DEFAULT_MAX_STEPS,
        MAX_HOOK_TIMEOUT_MS,
        SQLITE_OPTIONS,
        AgentConfig,
        BackendConfig,
        Config,
        ConfigLayer,
        ConfigSection,
        Effect,
        Floor,
        HooksConfig,
        LayerKind,
        Match,
        ModelConfig,
        Predicate,
        Rule,
        RuleExamples,
        SecretRef,
        Selection,
        SessionsConfig,
        SkillsConfig,
        ToolsConfig,
        VarDefinition,
        VarSource,
    )
    from raw_core.config._reading import load_config, parse_config
    from raw_core.config.layers import (
        MANAGED_CONFIG_ENV,
        SYSTEM_MANAGED_CONFIG,
        ConfigFiles,
        compose_layers,
        find_layers,
        load_layers,
        managed_config_path,
    )

_EXPORTS: dict[str, str] = {
    "AgentConfig": "raw_core.config._model",
    "BackendConfig": "raw_core.config._model",
    "CORE_SECTIONS": "raw_core.config._model",
    "Config": "raw_core.config._model",
    "ConfigFiles": "raw_core.config.layers",
    "ConfigLayer": "raw_core.config._rules",
    "ConfigSection": "raw_core.config._model",
    "DEFAULT_HANDLER_TIMEOUT_MS": "raw_core.config._model",
    "DEFAULT_HOOK_TIMEOUT_MS": "raw_core.config._model",
    "DEFAULT_MAX_OUTPUT_BYTES": "raw_core.config._model",
    "DEFAULT_MAX_STEPS": "raw_core.config._model",
    "Effect": "raw_core.config._rules",
    "Floor": "raw_core.config._rules",
    "HooksConfig": "raw_core.config._model",
    "LayerKind": "raw_core.config._rules",
    "MANAGED_CONFIG_ENV": "raw_core.config.layers",
    "MAX_HOOK_TIMEOUT_MS": "raw_core.config._model",
    "Match": "raw_core.config._rules",
    "ModelConfig": "raw_core.config._model",
    "Predicate": "raw_core.config._rules",
    "Rule": "raw_core.config._rules",
    "RuleExamples": "raw_core.config._rules",
    "SYSTEM_MANAGED_CONFIG": "raw_core.config.layers",
    "SQLITE_OPTIONS": "raw_core.config._model",
    "SecretRef": "raw_core.config._model",
    "Selection": "raw_core.config._model",
    "SessionsConfig": "raw_core.config._model",
    "SkillsConfig": "raw_core.config._model",
    "ToolsConfig": "raw_core.config._model",
    "VarDefinition": "raw_core.config._model",
    "VarSource": "raw_core.config._model",
    "compose_layers": "raw_core.config.layers",
    "find_layers": "raw_core.config.layers",
    "load_config": "raw_core.config._reading",
    "load_layers": "raw_core.config.layers",
    "managed_config_path": "raw_core.config.layers",
    "parse_config": "raw_core.config._reading",
}


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


__all__ = [
    "CORE_SECTIONS",
    "DEFAULT_HANDLER_TIMEOUT_MS",
    "DEFAULT_HOOK_TIMEOUT_MS",
    "DEFAULT_MAX_OUTPUT_BYTES",
    "DEFAULT_MAX_STEPS",
    "MANAGED_CONFIG_ENV",
    "MAX_HOOK_TIMEOUT_MS",
    "SQLITE_OPTIONS",
    "SYSTEM_MANAGED_CONFIG",
    "AgentConfig",
    "BackendConfig",
    "Config",
    "ConfigFiles",
    "ConfigLayer",
    "ConfigSection",
    "Effect",
    "Floor",
    "HooksConfig",
    "LayerKind",
    "Match",
    "ModelConfig",
    "Predicate",
    "Rule",
    "RuleExamples",
    "SecretRef",
    "Selection",
    "SessionsConfig",
    "SkillsConfig",
    "ToolsConfig",
    "VarDefinition",
    "VarSource",
    "compose_layers",
    "find_layers",
    "load_config",
    "load_layers",
    "managed_config_path",
    "parse_config",
]
