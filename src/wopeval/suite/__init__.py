"""wopeval.suite."""
