"""The judge's usage in ``wopeval run``'s output: its calls, tokens and cost, apart from the
agent's efficiency (RFC 0244 §C keeps the judge out of it), its cost within the run's total."""

from __future__ import annotations

import shutil
from typing import Any

import anyio

from wopeval.cli.common import opened_store
from wopeval.engine.judge import JudgeSpend, stored_judge_spend


def judge_spend_of(store_url: str | None, run_id: str) -> JudgeSpend:
    """The stored run's judge usage (its ``provider.usage`` outside every trial)."""

    async def read() -> JudgeSpend:
        async with opened_store(store_url, must_exist=True) as store:
            return await stored_judge_spend(store, run_id)

    return anyio.run(read)


def judge_json(spend: JudgeSpend) -> dict[str, Any]:
    """``--json``'s ``judge`` member (``costUsd`` null for an unpriced judge)."""
    return {
        "calls": spend.calls,
        "inputTokens": spend.input_tokens,
        "outputTokens": spend.output_tokens,
        "costUsd": spend.cost_usd,
    }


def judge_lines(spend: JudgeSpend, width: int | None = None) -> list[str]:
    """The judge's line, broken between its parts to fit ``width`` (the terminal's)."""
    from wopeval.cli.render import fit_lines

    calls = f"judge: {spend.calls} model call{'' if spend.calls == 1 else 's'}"
    tokens = f"{spend.input_tokens} input + {spend.output_tokens} output tokens"
    if spend.cost_usd is None:
        cost = "unpriced (--judge-price-in/--judge-price-out)"
    else:
        cost = f"${spend.cost_usd:.4f} of the run's cost"
    parts = [calls, tokens, cost, "not in the agent's efficiency"]
    columns = width if width is not None else shutil.get_terminal_size((80, 24)).columns
    return fit_lines(parts, columns)


__all__ = ["judge_json", "judge_lines", "judge_spend_of"]
