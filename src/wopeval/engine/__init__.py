"""wopeval.engine."""
