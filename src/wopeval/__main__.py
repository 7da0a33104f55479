"""``python -m wopeval`` is the ``wopeval`` command."""

from wopeval.cli.app import entry

entry()
