"""wopeval.events."""
