"""wopeval.cli."""
