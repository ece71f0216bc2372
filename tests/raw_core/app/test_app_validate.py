"""``validate_config`` asks each provider plug-in's own check of the models an agent names,
as a turn's factory would refuse them, without reading a credential."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from raw_core import hookimpl
from raw_core.app import validate_config
from raw_core.config import ModelConfig
from raw_core.errors import ConfigInvalid
from raw_core.plugins import PluginHost
from raw_core.providers import ProviderRecord


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _never_made(model: ModelConfig, /, *, api_key: str | None) -> Any:
    raise AssertionError("validate made a provider")


def _needs_region(model: ModelConfig) -> None:
    if model.base_url is None:
        raise ConfigInvalid(f"model {model.model!r} (provider regional) needs a base_url")


def _broken(model: ModelConfig) -> None:
    raise RuntimeError("the check itself failed")


class Providers:
    @hookimpl
    def raw_register_providers(self) -> list[ProviderRecord]:
        return [
            ProviderRecord(name="regional", factory=_never_made, check=_needs_region),
            ProviderRecord(name="broken", factory=_never_made, check=_broken),
            ProviderRecord(name="plain", factory=_never_made),
        ]


def config(tmp_path: Path, provider: str) -> Path:
    path = tmp_path / "raw.json"
    models = {"m": {"provider": provider, "model": "x"}}
    agents = {"a": {"model": "m", "tools": {"use": []}}}
    path.write_text(json.dumps({"models": models, "agents": agents}), encoding="utf-8")
    return path


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("provider", "problem"),
    [
        ("regional", ("config_invalid", "$.models.m", "model 'x' (provider regional) needs a")),
        ("broken", ("plugin_invalid", "$.models.m", "the 'broken' provider's check of model")),
        ("plain", None),
    ],
)
async def test_a_providers_own_check_decides_what_validate_reports(
    tmp_path: Path, provider: str, problem: tuple[str, str, str] | None
) -> None:
    host = PluginHost()
    host.register(Providers(), name="providers")
    report = await validate_config(config(tmp_path, provider), host=host)
    found = [(p.code, p.field, p.message) for p in report.problems]
    if problem is None:
        assert found == []
    else:
        ((code, field, message),) = found
        assert (code, field) == problem[:2]
        assert message.startswith(problem[2])
