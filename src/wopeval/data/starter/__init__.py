"""What ``wopeval init`` writes: a starter suite and the agent stub that passes it."""
