"""``python -m mobiflow``: the command line."""

from mobiflow.cli import main

main()
