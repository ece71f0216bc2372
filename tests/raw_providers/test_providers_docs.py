"""The config examples of docs/providers/ are valid configs whose models can be made."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from raw_core.config import parse_config
from raw_core.plugins import PluginHost
from raw_core.runtime.models import make_provider
from raw_providers import plugin

DOCS = Path(__file__).parents[2] / "docs" / "providers"
CONFIG_BLOCK = re.compile(r"<!-- config: (?P<name>[a-z-]+) -->\n```json\n(?P<body>.*?)```", re.S)


def examples() -> list[tuple[str, str]]:
    found = []
    for page in sorted(DOCS.glob("*.md")):
        for block in CONFIG_BLOCK.finditer(page.read_text(encoding="utf-8")):
            found.append((f"{page.name}:{block['name']}", block["body"]))
    return found


def test_every_provider_page_has_a_config_example() -> None:
    pages = {name.split(":")[0] for name, _ in examples()}
    assert pages == {"anthropic.md", "local.md", "openai.md"}


@pytest.mark.parametrize(("name", "body"), examples(), ids=[name for name, _ in examples()])
def test_the_example_config_loads_and_its_models_can_be_made(name: str, body: str) -> None:
    config = parse_config(body)
    host = PluginHost()
    host.register(plugin, name="providers")
    environ = {"OPENAI_API_KEY": "sk-x", "ANTHROPIC_API_KEY": "sk-y"}
    for model_name, model in config.models.items():
        made = make_provider(
            host, model, name=model_name, environ=environ, resolve_var=lambda var: "value"
        )
        assert made.name == model.provider
