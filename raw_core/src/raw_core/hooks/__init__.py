"""Command hooks (``raw.hook/2``): a user's program run at events — hook folders, their
subscriptions to an agent's tools, running them, and reading their answers.

Public names are imported lazily (PEP 562): importing the package imports none of
its modules, so a module of it can be imported without the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core._lazy import lazy_exports

if TYPE_CHECKING:
    from raw_core.hooks._environment import credential_names
    from raw_core.hooks.events import (
        HookContext,
        observe,
        post_tool_use,
        pre_tool_use,
        user_prompt_submit,
    )
    from raw_core.hooks.loader import LoadedHook, load_hook, load_hooks, user_hooks_dir
    from raw_core.hooks.manifest import (
        EVENTS,
        OBSERVER_EVENTS,
        TOOL_EVENTS,
        HookManifest,
        parse_hook_manifest,
    )
    from raw_core.hooks.subscriptions import HookSet, Subscription, SubscriptionExplanation

_EXPORTS: dict[str, str] = {
    "EVENTS": "raw_core.hooks.manifest",
    "HookContext": "raw_core.hooks.events",
    "HookManifest": "raw_core.hooks.manifest",
    "HookSet": "raw_core.hooks.subscriptions",
    "LoadedHook": "raw_core.hooks.loader",
    "OBSERVER_EVENTS": "raw_core.hooks.manifest",
    "Subscription": "raw_core.hooks.subscriptions",
    "SubscriptionExplanation": "raw_core.hooks.subscriptions",
    "TOOL_EVENTS": "raw_core.hooks.manifest",
    "credential_names": "raw_core.hooks._environment",
    "load_hook": "raw_core.hooks.loader",
    "load_hooks": "raw_core.hooks.loader",
    "observe": "raw_core.hooks.events",
    "parse_hook_manifest": "raw_core.hooks.manifest",
    "post_tool_use": "raw_core.hooks.events",
    "pre_tool_use": "raw_core.hooks.events",
    "user_hooks_dir": "raw_core.hooks.loader",
    "user_prompt_submit": "raw_core.hooks.events",
}


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


__all__ = [
    "EVENTS",
    "OBSERVER_EVENTS",
    "TOOL_EVENTS",
    "HookContext",
    "HookManifest",
    "HookSet",
    "LoadedHook",
    "Subscription",
    "SubscriptionExplanation",
    "credential_names",
    "load_hook",
    "load_hooks",
    "observe",
    "parse_hook_manifest",
    "post_tool_use",
    "pre_tool_use",
    "user_hooks_dir",
    "user_prompt_submit",
]
