"""The ``x-wopeval-world`` extension's rules over a whole suite (:mod:`wopeval.suite.extensions`):
each task's world (:func:`~wopeval.suite.world.world_rules`) and final-state assertion
(:func:`~wopeval.suite.world.final_state_rules`), in task order, each error naming its field."""

from __future__ import annotations

from wopeval.suite.errors import FieldError
from wopeval.suite.models import AgentEvalSuite
from wopeval.suite.world import FINAL_STATE_KEY, WORLD_KEY, final_state_rules, world_rules

__all__ = ["suite_world_rules"]


def suite_world_rules(suite: AgentEvalSuite) -> list[FieldError]:
    """Every world and final-state rule the suite's tasks break, in document order."""
    errors: list[FieldError] = []
    for index, task in enumerate(suite.tasks):
        path = f"tasks[{index}]"
        if task.world is not None:
            errors += world_rules(f"{path}.{WORLD_KEY}", task.world)
        final = task.expected.final_state
        if final is not None:
            errors += final_state_rules(f"{path}.expected.{FINAL_STATE_KEY}", final, task.world)
    return errors
