"""The run service: the one path from a suite and an agent to a stored, graded run."""
