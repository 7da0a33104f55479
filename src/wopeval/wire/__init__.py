"""wopeval.wire."""
