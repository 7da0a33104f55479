"""``python -m wopeval.cli`` is the ``wopeval`` command."""

from wopeval.cli.app import entry

entry()
