"""wopeval.grading."""
