"""Strict model cassettes: every model request of a run and its response, recorded per trial and
served back with no network (``wopeval run --record-model DIR`` / ``--replay-model DIR``).

A request's key is the SHA-256 of the canonical JSON of what determines its answer: the task id,
the trial index (so repeats stay independent samples), the HTTP method and path (not the host:
a replay may point anywhere), the whole JSON body (model, messages with tool results, tools,
sampling parameters) and the request's occurrence among identical ones in the same trial.
A request with no recording raises :class:`~wopeval.errors.ModelMiss` naming the first field
that differs from the nearest recording of that trial: the trial fails closed (``model-miss``),
and nothing falls through to a server. No header is stored, so no API key is (docs/cassettes.md).

A forked run (``wopeval fork --cassette DIR``) reads the original run's cassette in ``prefix``
mode: while the forked trial is inside its prefix (:attr:`Tape.live` is False until the fork's
gateway has served the last recorded tool call), its model requests are served from the
recordings of the original trial, strictly, as in a replay; after it, they reach the model
server, unrecorded.

The cassette in force is a ``ContextVar`` the command line sets around a run
(:func:`using_cassette`); each trial attempt carries its identity in another
(:func:`trial_tape`), which its agent's and judge's model calls inherit. The transport that
records or replays is :mod:`wopeval.agents.cassette_transport`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from wopeval.errors import ModelMiss, UserError

__all__ = [
    "FORMAT",
    "Cassette",
    "Tape",
    "active_cassette",
    "first_difference",
    "leave_prefix",
    "note_latency",
    "replayed_latency",
    "request_key",
    "trial_tape",
    "using_cassette",
]

FORMAT = "wopeval-model-cassette"
VERSION = 1
MANIFEST = "cassette.json"
TRIALS = "trials"
_FIRST = ("model", "messages", "tools")  # shown first when a request is walked
_SHOWN = 80
ABSENT = "(absent)"  # a field's value on the side that has no such field


def request_key(
    task_id: str, trial_index: int, method: str, path: str, body: Any, occurrence: int
) -> str:
    """The digest a recording is found by (see the module's docstring for what it covers)."""
    doc = {
        "taskId": task_id,
        "trialIndex": trial_index,
        "method": method.upper(),
        "path": path,
        "body": body,
        "occurrence": occurrence,
    }
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _keys(value: dict[str, Any]) -> list[str]:
    return [k for k in _FIRST if k in value] + sorted(k for k in value if k not in _FIRST)


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key in _keys(value):
            yield from _leaves(value[key], f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, f"{path}[{index}]")
        yield f"{path}.length", len(value)
    else:
        yield path, value


def first_difference(recorded: Any, got: Any) -> tuple[int, str, Any, Any] | None:
    """How many leading leaves two request bodies share, then the first field that differs
    (``messages[1].content``) and its recorded and requested values (``(absent)`` on the side
    without it; a list's length before an item it has no more); None when equal."""
    theirs, ours = list(_leaves(recorded)), list(_leaves(got))
    for shared, (a, b) in enumerate(zip(theirs, ours, strict=False)):
        if a != b:
            ends = [n for n in (a[0], b[0]) if n.endswith(".length")]
            return _field(theirs, ours, shared, ends[0] if ends else min(a[0], b[0]))
    shared = min(len(theirs), len(ours))
    rest = theirs[shared:] or ours[shared:]  # what the longer one has past the other's end
    return _field(theirs, ours, shared, rest[0][0]) if rest else None


def _field(
    theirs: list[tuple[str, Any]], ours: list[tuple[str, Any]], shared: int, name: str
) -> tuple[int, str, Any, Any]:
    return shared, name, dict(theirs).get(name, ABSENT), dict(ours).get(name, ABSENT)


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


@dataclass
class Tape:
    """One trial attempt's model calls: its identity, how often each request was made, and (when
    recording) the interactions in order."""

    task_id: str
    trial_index: int
    counts: dict[str, int] = field(default_factory=dict)
    interactions: list[dict[str, Any]] = field(default_factory=list)
    latency_ms: int | None = None  # measured (saved with a recording)
    recorded_latency_ms: int | None = None  # replaying: the latency its trial was recorded with
    live: bool = False  # prefix mode: the forked trial has left its prefix (calls go live)

    def occurrence(self, method: str, path: str, body: Any) -> int:
        """The index of this request among identical ones so far in the trial (counted)."""
        plain = request_key(self.task_id, self.trial_index, method, path, body, 0)
        count = self.counts.get(plain, 0)
        self.counts[plain] = count + 1
        return count


class Cassette:
    """A cassette directory: ``cassette.json`` (its format) and one file per trial,
    ``trials/<taskId>.<trialIndex>.json``. ``mode`` says whether this run records or replays."""

    def __init__(self, root: Path, mode: Literal["record", "replay", "prefix"]) -> None:
        self.root = root
        self.mode = mode
        self._recorded: dict[str, dict[str, Any]] = {}
        self._by_trial: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self._latency: dict[tuple[str, int], int] = {}

    @classmethod
    def for_recording(cls, root: Path, suite_id: str | None = None) -> Cassette:
        """A new cassette at ``root`` for the suite ``suite_id``: an empty or absent directory
        (never one that holds anything: nothing recorded is overwritten)."""
        if root.exists() and not root.is_dir():
            raise UserError(f"--record-model {root}: not a directory")
        if root.is_dir() and any(root.iterdir()):
            raise UserError(
                f"--record-model {root}: the directory is not empty (record into a "
                "new one; nothing recorded is overwritten)"
            )
        (root / TRIALS).mkdir(parents=True, exist_ok=True)
        manifest: dict[str, object] = {"format": FORMAT, "version": VERSION}
        if suite_id is not None:
            manifest["suiteId"] = suite_id
        (root / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        return cls(root, "record")

    @classmethod
    def for_replay(
        cls, root: Path, suite_id: str | None = None, *, option: str = "--replay-model"
    ) -> Cassette:
        """The cassette at ``root``, every trial's file read and checked now, before any trial;
        one recorded for another suite than ``suite_id`` is refused (``option`` names it)."""
        if not root.is_dir():
            what = "not a directory" if root.exists() else "no such cassette directory"
            raise UserError(f"{option} {root}: {what}")
        manifest = _read_json(root / MANIFEST, f"{option} {root}: not a model cassette")
        if not isinstance(manifest, dict):
            raise UserError(f"{option} {root}: {MANIFEST} is not a JSON object")
        if manifest.get("format") != FORMAT:
            raise UserError(
                f"{option} {root}: {MANIFEST} format: {_shown(manifest.get('format'))} "
                f"is not {FORMAT!r} (not a model cassette)"
            )
        if manifest.get("version") != VERSION:
            raise UserError(
                f"{option} {root}: {MANIFEST} version: "
                f"{_shown(manifest.get('version'))} is not {VERSION}"
            )
        recorded_for = manifest.get("suiteId")
        if suite_id is not None and recorded_for is not None and recorded_for != suite_id:
            raise UserError(
                f"{option} {root}: {MANIFEST} suiteId: the cassette was recorded for "
                f"suite {_shown(recorded_for)}, not {_shown(suite_id)}"
            )
        cassette = cls(root, "replay")
        for path in sorted((root / TRIALS).glob("*.json")):
            cassette._load(path, option)
        return cassette

    @classmethod
    def for_prefix(cls, root: Path, suite_id: str | None = None) -> Cassette:
        """The original run's cassette for a forked run (``wopeval fork --cassette``): read and
        checked as for a replay, serving only the forked trial's prefix."""
        cassette = cls.for_replay(root, suite_id, option="--cassette")
        cassette.mode = "prefix"
        return cassette

    def _load(self, path: Path, option: str) -> None:
        doc = _read_json(path, f"{option}: corrupt cassette file {path}")
        try:
            task_id, trial_index = doc["taskId"], doc["trialIndex"]
            latency = doc.get("latencyMs")
            if latency is not None:
                if type(latency) is not int or latency < 0:
                    raise ValueError(f"latencyMs {latency!r} is not a whole number of ms")
                self._latency[task_id, trial_index] = latency
            for item in doc["interactions"]:
                body, occurrence = item["request"]["body"], item["occurrence"]
                key = request_key(
                    task_id,
                    trial_index,
                    item["request"]["method"],
                    item["request"]["path"],
                    body,
                    occurrence,
                )
                if key != item["key"]:
                    raise ValueError(f"the key of interaction {occurrence} does not match it")
                int(item["response"]["status"])
                self._recorded[key] = item
                self._by_trial.setdefault((task_id, trial_index), []).append(item)
        except KeyError as exc:
            raise UserError(
                f"{option}: corrupt cassette file {path}: it lacks the member {exc}"
            ) from None
        except (TypeError, ValueError) as exc:
            raise UserError(
                f"{option}: corrupt cassette file {path}: {type(exc).__name__}: {exc}"
            ) from None

    def recorded_latency(self, task_id: str, trial_index: int) -> int | None:
        """The latency (ms) a trial was recorded with, when its file holds one."""
        return self._latency.get((task_id, trial_index))

    def find(self, tape: Tape, method: str, path: str, body: Any) -> dict[str, Any]:
        """The recorded response to this request of ``tape``'s trial, or :class:`ModelMiss`."""
        occurrence = tape.occurrence(method, path, body)
        key = request_key(tape.task_id, tape.trial_index, method, path, body, occurrence)
        item = self._recorded.get(key)
        if item is None:
            raise ModelMiss(self._miss(tape, method, path, body, occurrence))
        response: dict[str, Any] = item["response"]
        return response

    def _miss(self, tape: Tape, method: str, path: str, body: Any, occurrence: int) -> str:
        """Why a request has no recording, the differing field first (a reason is clipped)."""
        where = f"task {tape.task_id} trial {tape.trial_index}"
        head, tail = "no recording of this model request", f" (cassette {self.root})"
        route = {"method": method.upper(), "path": path}
        recorded = [
            item["request"]["body"]
            for item in self._by_trial.get((tape.task_id, tape.trial_index), ())
            if {k: item["request"][k] for k in route} == route
        ]
        if not recorded:
            return f"{head}: the cassette has no {route['method']} {path} of {where}{tail}"
        nearest: tuple[int, str, Any, Any] | None = None
        for recorded_body in recorded:
            got = first_difference(recorded_body, body)
            if got is None:  # the same request: it was made fewer times when recorded
                times = recorded.count(body)
                return (
                    f"{head}: it was recorded {times} time(s) in {where}, this is time "
                    f"{occurrence + 1}{tail}"
                )
            if nearest is None or got[0] > nearest[0]:
                nearest = got
        assert nearest is not None
        _, name, theirs, ours = nearest
        return (
            f"{head}: it differs at {name} from the nearest recording of {where}: recorded "
            f"{_shown(theirs)}, requested {_shown(ours)}{tail}"
        )

    def save(self, tape: Tape) -> None:
        """Write ``tape``'s trial file (replacing an earlier attempt's), atomically."""
        doc = {
            "taskId": tape.task_id,
            "trialIndex": tape.trial_index,
            "interactions": tape.interactions,
        }
        if tape.latency_ms is not None:
            doc["latencyMs"] = tape.latency_ms
        path = self.root / TRIALS / f"{tape.task_id}.{tape.trial_index}.json"
        partial = path.with_suffix(".json.partial")
        text = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)

    def record(
        self, tape: Tape, method: str, path: str, body: Any, response: dict[str, Any]
    ) -> None:
        """Keep one request (method, path and body: no header) and its response in ``tape``."""
        occurrence = tape.occurrence(method, path, body)
        key = request_key(tape.task_id, tape.trial_index, method, path, body, occurrence)
        tape.interactions.append(
            {
                "key": key,
                "occurrence": occurrence,
                "request": {"method": method.upper(), "path": path, "body": body},
                "response": response,
            }
        )


def _read_json(path: Path, refusal: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{refusal} (no {path.name})") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"{refusal}: {type(exc).__name__}: {exc}") from None


_CASSETTE: ContextVar[Cassette | None] = ContextVar("wopeval_model_cassette", default=None)
_TAPE: ContextVar[Tape | None] = ContextVar("wopeval_model_tape", default=None)


def active_cassette() -> Cassette | None:
    """The cassette this run records into or replays from, if any."""
    return _CASSETTE.get()


def current_tape() -> Tape | None:
    """The tape of the trial attempt this code runs in, if any."""
    return _TAPE.get()


def replayed_latency() -> int | None:
    """When this trial attempt is replayed: the latency its trial was recorded with (which the
    engine writes on its bracket, so the replay's summary is the recording's); else None."""
    tape = _TAPE.get()
    return tape.recorded_latency_ms if tape is not None else None


def leave_prefix() -> None:
    """The forked trial this code runs in has been served its whole prefix: its model calls
    from now on go to the model server (prefix mode; nothing otherwise)."""
    tape = _TAPE.get()
    if tape is not None:
        tape.live = True


def note_latency(latency_ms: int | None) -> None:
    """This trial attempt's measured latency, saved with its trial file when it is recorded."""
    tape = _TAPE.get()
    if tape is not None:
        tape.latency_ms = latency_ms


@contextmanager
def using_cassette(cassette: Cassette | None) -> Iterator[None]:
    """Make ``cassette`` the one in force inside the block (and the tasks started in it)."""
    token = _CASSETTE.set(cassette)
    try:
        yield
    finally:
        _CASSETTE.reset(token)


@contextmanager
def trial_tape(task_id: str, trial_index: int) -> Iterator[None]:
    """One trial attempt's identity for its model calls; a recording is saved when it ends."""
    cassette = _CASSETTE.get()
    if cassette is None:
        yield
        return
    tape = Tape(task_id, trial_index)
    if cassette.mode == "replay":
        tape.recorded_latency_ms = cassette.recorded_latency(task_id, trial_index)
    token = _TAPE.set(tape)
    try:
        yield
    finally:
        _TAPE.reset(token)
        if cassette.mode == "record":
            cassette.save(tape)
