"""wopeval.host."""
