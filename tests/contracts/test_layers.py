"""raw_core's packages form layers, and each imports only the layers at or below it.

Bottom to top:

1. foundation: the top-level modules ``errors``, ``frozen``, ``_json``, ``_convert``,
   ``_field_error``, ``_re2`` (the RE2 facade: tools' schemas and policy rules both
   compile patterns), ``_names`` (the grammar of one name segment and the reserved
   prefixes: the plug-in host checks plug-in names against it) and ``_identity`` (the
   tool-identity grammar: the config checks ``tools.use`` against it);
2. ``sessions``: the conversation's records, the backend protocol and the SQLite store
   (they import nothing of raw above the foundation, and the plug-in host registers
   session backends);
3. ``config``; 4. ``tools`` (the tool contract: manifests, loading, the call records,
   results, sources, the registry); 5. ``packages`` (the package store, install, and the
   ``pkg/`` source, which the agent layer hands to the tools' session sources);
   6. ``providers`` (the model-provider contract, and the scripted and replay providers);
   7. ``policy``; 8. ``plugins``; 9. ``hooks`` (command hooks: folders, subscriptions,
   running them); 10. ``dispatch``; 11. ``agent``; 12. ``runtime``; 13. ``app``;
   14. ``demo`` (files only); 15. the facade (``raw_core/__init__.py``, which re-exports
   every layer); 16. ``cli`` (and ``__main__``).

Every import counts: at module level, inside a function, and under ``TYPE_CHECKING`` (a
type-only import still ties the layers: the lower one cannot be read, typed or moved
without the upper one). A lower layer that needs something of an upper one takes it as a
parameter typed by a small protocol (``PluginRecords`` in ``config`` and in
``tools.sources``, ``ToolSelection`` in ``plugins.hooks``, ``SkillText`` in
``tools.calls``).
"""

from __future__ import annotations

from pathlib import Path

import raw_core
from tests.contracts.test_import_rules import imported_modules, module_name

ROOT = Path(raw_core.__file__).parent

FOUNDATION = frozenset(
    {
        "errors",
        "frozen",
        "_json",
        "_convert",
        "_field_error",
        "_re2",
        "_names",
        "_identity",
        "_lazy",
        "_os_text",
    }
)

LAYERS = (
    "foundation",
    "sessions",
    "config",
    "tools",
    "packages",
    "providers",
    "policy",
    "plugins",
    "hooks",
    "dispatch",
    "agent",
    "runtime",
    "app",
    "demo",
    "facade",
    "cli",
)


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "raw_core":
        return None
    if len(parts) == 1:
        return "facade"
    if parts[1] in FOUNDATION:
        return "foundation"
    if parts[1] == "__main__":
        return "cli"
    assert parts[1] in LAYERS, f"{module}: a package of no layer (add it to LAYERS)"
    return parts[1]


def upward_imports() -> dict[tuple[str, str], list[str]]:
    found: dict[tuple[str, str], list[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        module = module_name(path, ROOT, "raw_core")
        here = layer_of(module)
        assert here is not None
        for line, target in imported_modules(path, module):
            there = layer_of(target)
            if there is not None and LAYERS.index(there) > LAYERS.index(here):
                where = f"{path.relative_to(ROOT)}:{line} {target} ({here} -> {there})"
                found.setdefault((module, target), []).append(where)
    return found


def test_each_layer_imports_only_the_layers_below_it() -> None:
    found = upward_imports()
    upward = [where for places in found.values() for where in places]
    assert upward == [], "upward imports:\n" + "\n".join(upward)
