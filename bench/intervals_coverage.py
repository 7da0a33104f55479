"""How often each interval wopeval shows covers the true value: a seeded simulation.

Prints one JSON object. For n ∈ {3, 5, 10, 20} trials and a grid of true per-trial rates p across
(0, 1) (from 0.001 to 0.999, dense near both ends, where binomial intervals are known to fail),
``--replicates`` (20,000) draws of the passed count c ~ Binomial(n, p) are made with a fixed
seed, and for each statistic the share of draws whose interval holds the true value is counted:

- ``passRate``: :func:`wopeval.grading.intervals.clopper_pearson` against p;
- ``passAtK``: :func:`~wopeval.grading.intervals.pass_at_k_interval` against 1 − (1 − p)^k, the
  value Chen et al.'s estimator is unbiased for, for every k from 1 to n;
- ``passHatK``: :func:`~wopeval.grading.intervals.pass_hat_k_interval` against p^k, the
  expectation of C(c, k)/C(n, k) for c ~ Binomial(n, p), for every k from 1 to n.

- ``meanScore``: :func:`~wopeval.grading.intervals.mean_score_interval` against the mean of the
  per-trial score distribution, for graded (not 0/1) scores drawn from six Beta distributions.

``minimum`` is the lowest coverage over every (n, p, statistic, k) and ``floor`` the bar it must
meet (level − 1 point); ``ratio`` is minimum / floor. ``reference.wilson`` is the same count for
the Wilson interval (offered, not shown by default: it falls below the floor near 0 and 1).
``suite`` counts the suite aggregate's interval (``task_clopper_pearson``, shown) and the t
interval clustered by task (``cluster_t``, offered) against the population's mean rate, for 1 …
50 tasks drawn from six Beta populations, 1, 3, 5, 10 or 20 trials each.

Run: ``python3 bench/intervals_coverage.py`` (about a minute) or ``--quick`` (2,000 draws).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np
from scipy import stats

from wopeval.grading.intervals import (
    Interval,
    clopper_pearson,
    mean_score_interval,
    pass_at_k_interval,
    pass_hat_k_interval,
    task_clopper_pearson,
    wilson,
)
from wopeval.grading.quantiles import t_ppf

TRIALS = (3, 5, 10, 20)
RATES = (
    0.001, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075,
    *(round(0.1 + 0.05 * i, 3) for i in range(17)),
    0.925, 0.95, 0.97, 0.98, 0.99, 0.995, 0.999,
)  # fmt: skip
TASKS = (1, 2, 3, 5, 10, 20, 50)
POPULATIONS = {
    "beta(4,1)": (4.0, 1.0), "beta(1,1)": (1.0, 1.0), "beta(8,2)": (8.0, 2.0),
    "beta(30,1)": (30.0, 1.0), "beta(0.5,0.5)": (0.5, 0.5), "beta(1,8)": (1.0, 8.0),
}  # fmt: skip
SEED = 20261204


def _covers(table: list[Interval], truth: float) -> np.ndarray:
    """For each passed count c (the table's index): whether its interval holds ``truth``."""
    return np.array([iv.low <= truth <= iv.high for iv in table])


def _trial_rows(level: float, replicates: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for n in TRIALS:
        rate = [clopper_pearson(c, n, level) for c in range(n + 1)]
        score = [wilson(c, n, level) for c in range(n + 1)]
        at_k = {
            k: [pass_at_k_interval(c, n, k, level) for c in range(n + 1)] for k in range(1, n + 1)
        }
        hat_k = {
            k: [pass_hat_k_interval(c, n, k, level) for c in range(n + 1)] for k in range(1, n + 1)
        }
        for p in RATES:
            counts = np.bincount(rng.binomial(n, p, size=replicates), minlength=n + 1) / replicates

            def share(table: list[Interval], truth: float) -> float:
                return float(counts @ _covers(table, truth))  # noqa: B023 - used at once

            rows.append({"n": n, "p": p, "statistic": "passRate", "k": None,
                         "coverage": share(rate, p), "wilson": share(score, p)})  # fmt: skip
            for k in range(1, n + 1):
                rows.append({"n": n, "p": p, "statistic": "passAtK", "k": k,
                             "coverage": share(at_k[k], 1 - (1 - p) ** k)})  # fmt: skip
                rows.append({"n": n, "p": p, "statistic": "passHatK", "k": k,
                             "coverage": share(hat_k[k], p**k)})  # fmt: skip
    return rows


def _score_rows(level: float, replicates: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    """mean_score_interval's coverage for trial scores in [0, 1] drawn from Beta(a, b), n trials,
    vectorised with scipy's Beta quantile (the same formula; checked on the first draw)."""
    alpha = 1 - level
    rows = []
    for name, (a, b) in POPULATIONS.items():
        truth = a / (a + b)
        for n in TRIALS:
            means = rng.beta(a, b, size=(replicates, n)).mean(axis=1)
            s = means * n
            low = stats.beta.ppf(alpha / 2, s, n - s + 1)
            high = stats.beta.ppf(1 - alpha / 2, s + 1, n - s)
            shown = mean_score_interval(float(means[0]), n, level)
            assert abs(shown.low - low[0]) < 1e-9, (shown, low[0])
            covered = float(np.mean((low <= truth) & (truth <= high)))
            rows.append({"n": n, "scores": name, "statistic": "meanScore", "k": None,
                         "p": truth, "coverage": covered})  # fmt: skip
    return rows


def _suite_rows(level: float, replicates: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    """The suite's interval (``task_clopper_pearson``, shown) and ``cluster_t`` (offered), over
    ``replicates`` suites at once: each task's rate drawn from a Beta population, its score the
    share of n trials passed; the truth is the population's mean rate. Vectorised with scipy's
    Beta and t quantiles (the same formulas; checked against wopeval's functions on the first
    draws of each row)."""
    alpha = 1 - level
    rows = []
    for name, (a, b) in POPULATIONS.items():
        truth = a / (a + b)
        for m in TASKS:
            for n in (1, *TRIALS):
                scores = rng.binomial(n, rng.beta(a, b, size=(replicates, m))) / n
                s = scores.sum(axis=1)
                with np.errstate(all="ignore"):
                    low = np.where(s > 0, stats.beta.ppf(alpha / 2, s, m - s + 1), 0.0)
                    high = np.where(s < m, stats.beta.ppf(1 - alpha / 2, s + 1, m - s), 1.0)
                shown = task_clopper_pearson(list(scores[0]), level)
                assert shown is not None
                assert abs(shown.low - low[0]) < 1e-9, (shown, low[0])
                assert abs(shown.high - high[0]) < 1e-9, (shown, high[0])
                row = {"population": name, "tasks": m, "n": n, "truth": truth,
                       "coverage": float(np.mean((low <= truth) & (truth <= high)))}  # fmt: skip
                if m > 1:
                    mean = scores.mean(axis=1)
                    sd = scores.std(axis=1, ddof=1)
                    half = t_ppf(1 - alpha / 2, m - 1) * sd / np.sqrt(m)
                    covered = (mean - half <= truth) & (truth <= mean + half)
                    row["clusterT"] = float(np.mean(covered))
                rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 draws instead of 20,000")
    parser.add_argument("--replicates", type=int, default=20_000)
    parser.add_argument("--level", type=float, default=0.95)
    args = parser.parse_args()
    replicates = 2_000 if args.quick else args.replicates
    rng = np.random.default_rng(SEED)
    started = time.perf_counter()
    rows = _trial_rows(args.level, replicates, rng) + _score_rows(args.level, replicates, rng)
    suite = _suite_rows(args.level, replicates, rng)
    floor = args.level - 0.01
    worst = min(rows, key=lambda row: row["coverage"])
    worst_wilson = min((r for r in rows if "wilson" in r), key=lambda row: row["wilson"])
    by_statistic = {
        name: min(r["coverage"] for r in rows if r["statistic"] == name)
        for name in ("passRate", "meanScore", "passAtK", "passHatK")
    }
    print(json.dumps({
        "level": args.level,
        "replicates": replicates,
        "seed": SEED,
        "floor": floor,
        "minimum": worst["coverage"],
        "ratio": worst["coverage"] / floor,
        "allAtFloor": worst["coverage"] >= floor,
        "worst": worst,
        "minimumByStatistic": by_statistic,
        "reference": {"wilson": {"minimum": worst_wilson["wilson"], "at": {
            "n": worst_wilson["n"], "p": worst_wilson["p"]}}},
        "suite": {
            "method": "task-clopper-pearson",
            "minimum": min(r["coverage"] for r in suite),
            "allAtFloor": min(r["coverage"] for r in suite) >= floor,
            "clusterTMinimum": min(r["clusterT"] for r in suite if "clusterT" in r),
            "rows": suite,
        },
        "rows": rows,
        "seconds": round(time.perf_counter() - started, 1),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
