"""Deprecated: the patch format moved to :mod:`raw_builtin_tools.toolkit`.

Kept only while ``benchmarks/bench_builtin_tools.py`` still imports it from here; nothing in
this distribution uses it. Import these names from ``raw_builtin_tools.toolkit``.
"""

from __future__ import annotations

from raw_builtin_tools.toolkit.patch import Hunk, LineKind, Patch, UpdateFile, render_patch

__all__ = ["Hunk", "LineKind", "Patch", "UpdateFile", "render_patch"]
