"""Built-in agents: the conformance scripted agent and the quickstart example."""
