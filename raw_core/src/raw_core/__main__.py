"""``python -m raw_core`` runs the ``raw`` command line."""

from raw_core.cli import main

main()
