"""Event and run ids (ULID-shaped, strictly increasing within a process) and timestamps (one
fixed-width UTC form), including the kept-digit shortcuts of wopeval.events.ids."""

from __future__ import annotations

import itertools
import re
import time
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wopeval.events import ids

EVENT_ID = re.compile(ids.EVENT_ID_PATTERN)
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def _expected(ms: int, random_part: int) -> str:
    return ids._base32(ms, 10) + ids._base32(random_part, 16)


def test_event_ids_strictly_increase_and_match_the_pattern() -> None:
    made = [ids.new_event_id() for _ in range(20_000)]
    assert all(EVENT_ID.fullmatch(i) and len(i) == 26 for i in made)
    assert all(a < b for a, b in itertools.pairwise(made))


@given(high=st.integers(0, (1 << 70) - 2), low=st.integers(1000, 1023))
def test_an_id_within_one_millisecond_is_the_full_encoding_of_the_next_value(
    high: int, low: int
) -> None:
    # Inside one millisecond the random part is incremented; only its last two digits are
    # re-encoded unless the increment carries into the others: each id equals the whole
    # encoding, across the carry too.
    ulid = ids._MonotonicUlid()
    ms = time.time_ns() // 1_000_000 + 10**9  # "now" stays within this millisecond
    start = high << 10 | low
    ulid._last_ms, ulid._last_random = ms, start
    ulid._prefix = ids._base32(ms, 10) + ids._base32(start >> 10, 14)
    got = [ulid() for _ in range(30)]  # crosses the carry at 1024
    assert got == [_expected(ms, start + k) for k in range(1, 31)]


def test_a_new_millisecond_draws_a_new_random_part() -> None:
    ulid = ids._MonotonicUlid()
    first = ulid()
    time.sleep(0.002)
    second = ulid()
    assert first[:10] < second[:10]
    assert EVENT_ID.fullmatch(second)


@pytest.mark.parametrize("ms", [0, 999, 1_700_000_000_123, 1_764_590_400_999, 253_402_300_799_999])
def test_a_timestamp_is_the_milliseconds_utc_text(ms: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ids, "_last_stamp", (-1, ""))
    monkeypatch.setattr(time, "time_ns", lambda: ms * 1_000_000 + 999_999)
    text = ids.utc_now()
    assert STAMP.fullmatch(text)
    exact = datetime.fromtimestamp(ms // 1000, UTC).replace(microsecond=ms % 1000 * 1000)
    assert text == exact.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert ids.utc_now() == text  # kept for the rest of that millisecond


def test_each_millisecond_of_a_clock_walk_is_its_own_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kept second's text never leaks into another second: forwards across second and
    day boundaries, and a clock stepped back."""
    walk = [
        1_764_633_599_998,
        1_764_633_599_999,
        1_764_633_600_000,
        1_764_633_600_001,
        1_764_633_600_999,
        1_764_633_601_000,
        1_764_633_599_500,
        1_764_633_600_000,
    ]
    for ms in walk:
        monkeypatch.setattr(time, "time_ns", lambda ms=ms: ms * 1_000_000)
        exact = datetime.fromtimestamp(ms // 1000, UTC).replace(microsecond=ms % 1000 * 1000)
        assert ids.utc_now() == exact.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_timestamps_follow_the_clock() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    stamp = ids.utc_now()
    after = datetime.now(UTC)
    moment = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert before <= moment <= after
