"""Benchmarks (scripts printing JSON); a package so that bench/agents.py is ``bench.agents``."""
