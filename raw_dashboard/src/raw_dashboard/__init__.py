"""The browser dashboard of raw: ``raw dashboard`` serves it on 127.0.0.1.

The plug-in (entry point ``dashboard`` in the ``raw`` group, :mod:`raw_dashboard.plugin`)
adds the command. :class:`~raw_dashboard.server.Dashboard` is the server, a client of
the session service (:class:`raw_core.app.App`) like the terminal;
:class:`~raw_dashboard.security.Guard` holds its token, Host and Origin checks, and
:class:`~raw_dashboard.prefs.Preferences` the browser preferences file. See
``docs/dashboard.md``. Public names are imported lazily (PEP 562): the server's
libraries load only when it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core import lazy_exports

if TYPE_CHECKING:
    from raw_dashboard.live import APPROVAL_WAIT, DashboardFrontEnd, Hub
    from raw_dashboard.prefs import Preferences
    from raw_dashboard.security import CONTENT_SECURITY_POLICY, Guard, new_token
    from raw_dashboard.server import HOST, Dashboard

__all__ = [
    "APPROVAL_WAIT",
    "CONTENT_SECURITY_POLICY",
    "HOST",
    "Dashboard",
    "DashboardFrontEnd",
    "Guard",
    "Hub",
    "Preferences",
    "new_token",
]

_EXPORTS: dict[str, str] = {
    "APPROVAL_WAIT": "raw_dashboard.live",
    "DashboardFrontEnd": "raw_dashboard.live",
    "Hub": "raw_dashboard.live",
    "Preferences": "raw_dashboard.prefs",
    "CONTENT_SECURITY_POLICY": "raw_dashboard.security",
    "Guard": "raw_dashboard.security",
    "new_token": "raw_dashboard.security",
    "HOST": "raw_dashboard.server",
    "Dashboard": "raw_dashboard.server",
}


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
