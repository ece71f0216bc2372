"""The terminal's libraries cost startup time: rich is imported only to draw on a terminal
and prompt_toolkit only for a chat's prompt on one, so ``raw tools list`` imports neither."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROGRAM = """
import sys
from raw_core.cli import main
sys.argv = ["raw", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    code = exc.code
print("LOADED", sorted({m.split(".")[0] for m in sys.modules} & {"rich", "prompt_toolkit"}))
sys.exit(code)
"""


def test_tools_list_imports_neither_rich_nor_prompt_toolkit(tmp_path: Path) -> None:
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps(
            {
                "models": {"m": {"provider": "replay", "model": str(tmp_path / "none.jsonl")}},
                "agents": {"a": {"model": "m", "tools": {"use": ["builtin/bash"]}}},
            }
        )
    )
    result = subprocess.run(
        [sys.executable, "-c", PROGRAM, "tools", "list", "--config", str(config)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "bash" in result.stdout
    assert result.stdout.splitlines()[-1] == "LOADED []"
