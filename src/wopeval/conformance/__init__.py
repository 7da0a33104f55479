"""wopeval.conformance."""
