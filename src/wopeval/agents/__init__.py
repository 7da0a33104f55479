"""wopeval.agents."""
