"""``bench/retry_bias.py``, quick: its report's shape, and what it exists to show on its seeded
draws: retries keep pass@k and pass^k within Monte-Carlo error of the error-free run, standing
infrastructure errors pull them down, and re-rolling on the outcome pushes them up."""

from __future__ import annotations

import json

import pytest
from bench.retry_bias import METRICS, main


def test_retries_stay_within_monte_carlo_error_of_the_error_free_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--quick"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["mean"]) == {"errorFree", "noRetry", "retries", "peerRetryIfBelow"}
    against = report["vsErrorFree"]
    for metric in METRICS:
        assert against["retries"][metric]["withinMcError"] is True
        assert against["noRetry"][metric]["meanDiff"] < 0  # errors that stand fail trials
        assert against["peerRetryIfBelow"][metric]["z"] > 3  # re-rolling failures inflates
