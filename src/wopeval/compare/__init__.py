"""wopeval.compare."""
