"""The files of ``raw demo``: a small project, its config, and a recorded model."""

from pathlib import Path

DEMO_DIR = Path(__file__).parent

__all__ = ["DEMO_DIR"]
