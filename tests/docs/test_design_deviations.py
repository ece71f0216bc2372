"""docs/design.md records where raw deviates from what its issues listed: here, the
provider stream, which has no error event (a provider raises instead)."""

from __future__ import annotations

import typing
from pathlib import Path

from raw_core.providers.contract import ProviderEvent

DESIGN = (Path(__file__).parents[2] / "docs" / "design.md").read_text(encoding="utf-8")


def test_the_provider_streams_missing_error_event_is_a_recorded_deviation() -> None:
    names = {event.__name__ for event in typing.get_args(ProviderEvent)}
    assert "StopEvent" in names
    assert not any("Error" in name for name in names)
    rows = [line for line in DESIGN.splitlines() if line.startswith("| a failed model request")]
    assert len(rows) == 1, "docs/design.md has no row for the provider stream's errors"
    assert "no `error` event" in rows[0]
    assert "ProviderError" in rows[0]
