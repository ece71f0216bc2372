"""Which config raw uses: --config, a trusted ./raw.json, the user's config.json."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from raw_core.config.discovery import find_config, is_trusted, trust_folder, user_config_path
from raw_core.errors import ConfigNotFound, ConfigUntrusted


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "raw.json").write_text("{}")
    return folder


def test_explicit_config_is_used_as_given(
    tmp_path: Path, env: dict[str, str], project: Path
) -> None:
    assert find_config(tmp_path / "x.json", cwd=project, environ=env) == tmp_path / "x.json"


def test_an_untrusted_project_config_is_refused_saying_how_to_trust_it(
    env: dict[str, str], project: Path
) -> None:
    with pytest.raises(ConfigUntrusted) as caught:
        find_config(cwd=project, environ=env)
    assert caught.value.code == "config_untrusted"
    assert f"raw config trust {project}" in caught.value.message
    assert "--config" in caught.value.message


def test_a_trusted_project_config_is_used(env: dict[str, str], project: Path) -> None:
    trust_folder(project, env)
    assert is_trusted(project, env)
    assert find_config(cwd=project, environ=env) == project / "raw.json"
    trust_file = Path(env["XDG_CONFIG_HOME"]) / "raw" / "trusted-folders.json"
    assert oct(os.stat(trust_file).st_mode & 0o777) == "0o600"


def test_trust_follows_links(env: dict[str, str], project: Path, tmp_path: Path) -> None:
    link = tmp_path / "alias"
    link.symlink_to(project, target_is_directory=True)
    trust_folder(link, env)
    assert find_config(cwd=project, environ=env) == project / "raw.json"


def test_trusting_one_folder_does_not_trust_another(
    env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "raw.json").write_text("{}")
    trust_folder(project, env)
    with pytest.raises(ConfigUntrusted):
        find_config(cwd=other, environ=env)


def test_without_a_project_config_the_user_config_is_used(
    tmp_path: Path, env: dict[str, str]
) -> None:
    user = user_config_path(env)
    user.parent.mkdir(parents=True)
    user.write_text("{}")
    assert find_config(cwd=tmp_path, environ=env) == user


def test_no_config_at_all_says_what_to_do(tmp_path: Path, env: dict[str, str]) -> None:
    with pytest.raises(ConfigNotFound, match="raw config init"):
        find_config(cwd=tmp_path, environ=env)


def test_a_damaged_trust_list_trusts_nothing(env: dict[str, str], project: Path) -> None:
    trust_folder(project, env)
    (Path(env["XDG_CONFIG_HOME"]) / "raw" / "trusted-folders.json").write_text("{not json")
    assert not is_trusted(project, env)
