"""Robustness fuzz pass (issue 14): bodies, suite files and headers thrown at a real host.

Starts ``python -m wopeval.host`` on a loopback socket with a suite directory, then sends:

* ``bodies``: ``POST /runs`` bodies — hypothesis-generated JSON values and mutations of a valid
  body (duplicate members, BOMs, UTF-16/32, deep nesting, huge integers, NaN, unknown members,
  wrong types), plus every operation of ``/openapi.json`` fuzzed by schemathesis;
* ``suites``: suite files written into the host's suite directory while it runs (the hostile
  set of tests/robust/hostile.py and random mutations of a valid suite), each then referenced
  by ``POST /runs``;
* ``headers``: hostile ``OpenWOP-Version``, ``Content-Type``, ``Authorization``,
  ``Last-Event-ID``, ``Idempotency-Key`` and ``OpenWOP-Dedup`` values;
* ``configurable``: create bodies whose ``configurable`` has a misspelt, dotted or wrongly typed
  member inside a section (each must be ``400`` naming it: ``configurableAccepted`` must be 0);
* ``paths``: malformed run ids in paths (a lone ``~``, double projections, no tenant, random
  segments of ``~%:`` and id characters; ``400``, never ``5xx``; ``malformed404`` must be 0).
* ``signin``: 100 wrong keys at ``POST /view/login``, each with another ``X-Forwarded-For``
  from loopback (not a trusted proxy): at most 20 are checked before ``429``
  (``loginGuessesChecked`` ≤ 20), and the right key still signs in (``validKeyRefused`` 0).

And in process, without the host:

* ``validate``: ``wopeval validate`` on each hostile suite file (5,000-digit YAML and JSON
  integers among them): exit 2 naming the field, ``tracebacks`` must be 0;
* ``trials``: a run whose agent, live tool and judge raise exceptions whose ``str()`` raises or
  whose text holds ANSI colours, NUL, lone surrogates, HTML and Markdown: the run completes,
  only those trials fail (``runsFailed`` must be 0), each reason names the exception type; and
  whose agents return 2 MB, are served 2 MB by a tool, or call a tool 5,000 times, past the
  run's caps: each such trial fails naming its cap (``capsNamed`` = ``capTrials``), and the
  store stays near the caps (``storeBytes`` against ``hostileBytes``);
* ``exports``: that run's JUnit XML (``xmlWellFormed``) and Markdown (``markdownTags``: HTML
  elements GitHub would render from reasons, must be 0), and ``texts`` random strings through
  ``xml_text`` and ``markdown_text`` (``textFailures`` must be 0).

Prints one JSON document: per kind, the count tried and the outcomes by status and error code;
``fiveHundreds`` (must be 0); ``unnamed4xx`` (``validation_error`` answers without a non-empty
``details.field``; must be 0); and ``peakHostRssMiB`` (the host process's VmHWM).

Usage: ``python3 bench/robust_fuzz.py [--examples N] [--only KIND ...]`` (host kinds need the
host; ``--only validate trials exports`` runs in a few seconds).
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.robust.hostile import write_hostile  # noqa: E402
from tests.robust.test_openapi_fuzz import fuzz_openapi  # noqa: E402

from bench.robust_inputs import (  # noqa: E402
    MALFORMED_SEGMENTS,
    bad_configurables,
    fuzz_exports,
    fuzz_trials,
    fuzz_validate,
)

KEY = "bench-robust-key-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {KEY}", "OpenWOP-Version": "2.0"}
VALID = {"mode": "eval", "evalSuiteRef": "suite://core.bench.evals.ok",
         "agentId": "core.conformance.agents.scripted"}  # fmt: skip
_MATCH = {"strategy": "exact", "value": "x"}
_TASK = {"taskId": "t", "input": {"output": "x"}, "expected": {"kind": "golden", "match": _MATCH}}
SUITE = {"suiteId": "core.bench.evals.ok", "version": "1.0.0", "modes": ["golden"],
         "tasks": [_TASK]}  # fmt: skip


class Tally:
    def __init__(self) -> None:
        self.outcomes: dict[str, Counter[str]] = {}
        self.five_hundreds = 0
        self.unnamed = 0
        self.extra: dict[str, Any] = {}

    def record(self, kind: str, response: httpx.Response) -> None:
        key = str(response.status_code)
        if response.status_code >= 500:
            self.five_hundreds += 1
        if 400 <= response.status_code < 500:
            body = response.json()
            key += " " + body["error"]
            if body["error"] == "validation_error" and not (body.get("details") or {}).get("field"):
                self.unnamed += 1
        self.outcomes.setdefault(kind, Counter())[key] += 1


def _start(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    config = directory / "host.json"
    suites = directory / "suites"
    suites.mkdir()
    (suites / "ok.json").write_text(json.dumps(SUITE), encoding="utf-8")
    settings_ = {"apiKeys": [{"key": KEY, "tenant": "acme"}], "suiteDirectories": [str(suites)],
                 "limits": {"activeRunsPerTenant": 10_000}}  # fmt: skip
    config.write_text(json.dumps(settings_), encoding="utf-8")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    store = str(directory / "store.db")
    command = [sys.executable, "-m", "wopeval.host", "--log-level", "critical", "--port",
               str(port), "--store", store, "--config", str(config)]  # fmt: skip
    proc = subprocess.Popen(command, stderr=subprocess.DEVNULL, cwd=ROOT)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            httpx.get(base + "/.well-known/openwop", timeout=1)
            return proc, base
        except httpx.TransportError:
            time.sleep(0.05)
    raise RuntimeError("the host did not start")


def _mutations(rng: random.Random) -> list[bytes]:
    valid = json.dumps(VALID)
    inner = valid[1:-1]
    fixed = [
        b'{"tenantId":"beta","tenantId":"acme",' + inner.encode() + b"}",
        b"\xef\xbb\xbf" + valid.encode(),
        valid.encode("utf-16"),
        valid.encode("utf-32"),
        b"[" * 5000 + b"]" * 5000,
        ('{"metadata":{"n":' + "9" * 5000 + "}," + inner + "}").encode(),
        b'{"metadata":{"n":NaN},' + inner.encode() + b"}",
        b'{"":1,' + inner.encode() + b"}",
        b"\xff\xfe\x00",
        b'{"tags":"x",' + inner.encode() + b"}",
    ]
    keys = [*VALID, "tags", "metadata", "evalModes", "baselineRunId", "scopeId", "inputs"]
    values: list[Any] = [None, True, 1, -1, 1.5, "", "x" * 300, [], {}, [1], {"a": 1}]
    for _ in range(300):
        body: dict[str, Any] = dict(VALID)
        for _ in range(rng.randint(1, 3)):
            body[rng.choice(keys)] = rng.choice(values)
        if rng.random() < 0.2:
            body.pop(rng.choice(list(body)), None)
        fixed.append(json.dumps(body).encode())
    return fixed


def fuzz_bodies(client: httpx.Client, tally: Tally, rng: random.Random, examples: int) -> int:
    sent = 0
    for raw in _mutations(rng):
        tally.record("bodies", client.post("/runs", content=raw, headers={
            **AUTH, "Content-Type": "application/json"}))  # fmt: skip
        sent += 1
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
        max_leaves=20,
    )

    @given(value=json_values)
    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    def generated(value: Any) -> None:
        nonlocal sent
        raw = json.dumps(value).encode()
        tally.record("bodies", client.post("/runs", content=raw, headers={
            **AUTH, "Content-Type": "application/json"}))  # fmt: skip
        sent += 1

    generated()
    return sent


def fuzz_suites(client: httpx.Client, base: Path, tally: Tally, rng: random.Random) -> int:
    hostile = base / "suites" / "hostile"
    named = write_hostile(hostile)
    sent = 0
    for index in range(200):
        doc: Any = json.loads(json.dumps(SUITE))
        doc["suiteId"] = f"core.bench.evals.m{index}"
        target = rng.choice([doc, doc["tasks"][0], doc["tasks"][0]["expected"]])
        target[rng.choice(list(target))] = rng.choice([None, 1, "", [], {}, "x" * 100, -5])
        (hostile / f"m{index}.json").write_text(json.dumps(doc), encoding="utf-8")
    time.sleep(1.1)  # the catalog re-scans at most once a second
    refs = [f"suite://core.bench.evals.m{i}" for i in range(200)] + [
        "suite://core.hostile.evals.x", "suite://core.nobody.evals.none"]  # fmt: skip
    for ref in refs:
        tally.record("suites", client.post("/runs", json={**VALID, "evalSuiteRef": ref},
                                           headers=AUTH))  # fmt: skip
        sent += 1
    ok = client.post("/runs", json=VALID, headers=AUTH)
    assert ok.status_code == 201, ok.text  # the good suite keeps serving
    return sent + len(named)


def fuzz_headers(client: httpx.Client, tally: Tally) -> int:
    values = ["2.000", "02.0", "3.0", "two", "2." + "0" * 500, "9" * 100, "x;y", "-1",
              "application/json; charset=utf-16", "Bearer", "Basic abc", "text/plain"]  # fmt: skip
    sent = 0
    for value in values:
        for name in ("OpenWOP-Version", "Content-Type", "Authorization", "Last-Event-ID",
                     "Idempotency-Key", "OpenWOP-Dedup"):  # fmt: skip
            headers = {**AUTH, name: value}
            if name == "Last-Event-ID":
                response = client.get("/runs/acme~2Fr0/events/poll?timeout=1", headers=headers)
            else:
                raw = json.dumps(VALID).encode()
                sent_headers = {"Content-Type": "application/json", **headers}
                response = client.post("/runs", content=raw, headers=sent_headers)
            tally.record("headers", response)
            sent += 1
    return sent


def fuzz_configurable(client: httpx.Client, tally: Tally, rng: random.Random) -> int:
    accepted = 0
    bodies = bad_configurables(rng, 200)
    for configurable in bodies:
        response = client.post("/runs", json={**VALID, "configurable": configurable},
                               headers=AUTH)  # fmt: skip
        tally.record("configurable", response)
        accepted += response.status_code < 300
    tally.extra["configurableAccepted"] = accepted
    return len(bodies)


def fuzz_signin(client: httpx.Client, tally: Tally) -> int:
    """Guesses at the viewer's sign-in, each from another forwarded address (ignored: loopback
    is not a trusted proxy), then the right key."""
    checked = 0
    for n in range(100):
        headers = {"X-Forwarded-For": f"203.0.113.{n}"}
        response = client.post("/view/login", data={"key": f"wrong-key-{n:04d}-abcdefgh"},
                               headers=headers)  # fmt: skip
        tally.outcomes.setdefault("signin", Counter())[str(response.status_code)] += 1
        tally.five_hundreds += response.status_code >= 500
        checked += response.status_code == 401
    right = client.post("/view/login", data={"key": KEY})
    tally.outcomes["signin"][f"{right.status_code} (the right key)"] += 1
    tally.extra["loginGuessesChecked"] = checked
    tally.extra["validKeyRefused"] = int(right.status_code != 303)
    return 101


def fuzz_paths(client: httpx.Client, tally: Tally, rng: random.Random) -> int:
    alphabet = "~%:/2F7Eacme019._-"
    segments = [*MALFORMED_SEGMENTS]
    segments += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
                 for _ in range(200)]  # fmt: skip
    malformed_404 = 0
    for index, segment in enumerate(segments):
        suffix = rng.choice(["", "/events/poll?timeout=0", "/eval-summary"])
        response = client.get(f"/runs/{segment.replace('/', '%2F')}{suffix}", headers=AUTH)
        tally.record("paths", response)
        malformed_404 += index < len(MALFORMED_SEGMENTS) and response.status_code == 404
    tally.extra["malformed404"] = malformed_404
    return len(segments)


def _peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return -1.0


HOST_KINDS = ("openapi", "bodies", "suites", "headers", "configurable", "paths", "signin")
LOCAL_KINDS = ("validate", "trials", "exports")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--only", nargs="+", choices=[*HOST_KINDS, *LOCAL_KINDS])
    args = parser.parse_args()
    kinds = set(args.only or (*HOST_KINDS, *LOCAL_KINDS))
    rng = random.Random(14)
    tally = Tally()
    counts: dict[str, int] = {}
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if kinds & set(LOCAL_KINDS):
            counts["validate"], report["validate"] = fuzz_validate(Path(tmp) / "validate")
            trials, run = fuzz_trials(Path(tmp) / "trials.db")
            counts["trials"], report["trials"] = trials["tried"], trials
            counts["exports"], report["exports"] = fuzz_exports(run, args.examples)
        if kinds & set(HOST_KINDS):
            report["host"] = _fuzz_host(Path(tmp), kinds, args.examples, rng, tally, counts)
    print(json.dumps({
        "tried": counts,
        "outcomes": {kind: dict(sorted(c.items())) for kind, c in tally.outcomes.items()},
        "fiveHundreds": tally.five_hundreds,
        "unnamed4xx": tally.unnamed,
        **tally.extra,
        **report,
    }, indent=2))  # fmt: skip


def _fuzz_host(base: Path, kinds: set[str], examples: int, rng: random.Random, tally: Tally,
               counts: dict[str, int]) -> dict[str, Any]:  # fmt: skip
    proc, base_url = _start(base)
    try:
        # schemathesis first: the header pass's bad keys count towards the per-client
        # rate limit of failed authentication (20 a minute), which would answer it 429.
        if "openapi" in kinds:
            openapi = fuzz_openapi(base_url, max(10, examples // 10), AUTH)
            tally.outcomes["openapi"] = openapi
            counts["openapi"] = sum(openapi.values())
            tally.five_hundreds += sum(v for k, v in openapi.items() if k[0] == "5")
        with httpx.Client(base_url=base_url, timeout=60) as client:
            if "bodies" in kinds:
                counts["bodies"] = fuzz_bodies(client, tally, rng, examples)
            if "suites" in kinds:
                counts["suites"] = fuzz_suites(client, base, tally, rng)
            if "configurable" in kinds:
                counts["configurable"] = fuzz_configurable(client, tally, rng)
            if "paths" in kinds:
                counts["paths"] = fuzz_paths(client, tally, rng)
            if "headers" in kinds:
                counts["headers"] = fuzz_headers(client, tally)
            if "signin" in kinds:  # after every other kind: it fills the failure limit
                counts["signin"] = fuzz_signin(client, tally)
        peak = _peak_rss_mib(proc.pid)
    finally:
        proc.terminate()
        code = proc.wait(timeout=60)
    return {"peakHostRssMiB": peak, "hostExitOnSigterm": code}


if __name__ == "__main__":
    main()
