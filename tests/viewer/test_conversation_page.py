"""The trial page's conversation and state-diff views in a real browser (Debian's chromium via
Playwright) over a real socket, on a laptop and on a phone.

A real run of the scripted agent (`data/conversation.yaml`): a conversation with a world that
passes, a user miss whose message is hostile text, a final state that differs after a long
reply, and a conversation without a world. Screenshots go to ``$WOPEVAL_SHOTS`` when it is set
(to look at them), else the test's output folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.host.helpers import TENANT_A, host_config, serving
from tests.viewer.browsing import NO_SIDEWAYS, Pages, shots_dir
from tests.viewer.test_viewer_pages import DATA, make_run

pytestmark = pytest.mark.slow
VIEWPORTS = {"laptop": (1280, 800), "phone": (375, 812)}


@pytest.fixture(scope="module")
def pages(chromium_browser: Any) -> Pages:
    """The module's reused pages, signed in by API key, at this module's sizes (its phone is
    the narrowest: 375 pixels)."""
    return Pages(chromium_browser, VIEWPORTS)


@dataclass
class Site:
    url: str
    run: str
    shots: Path

    def trial(self, task: str, index: int = 0) -> str:
        return f"{self.url}/trial?run={self.run}&task={task}&i={index}"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("viewer-conversation")
    store = str(folder / "viewer.db")
    run = anyio.run(make_run, store, DATA / "conversation.yaml", TENANT_A)
    with serving(store, host_config()) as server:
        yield Site(server.base_url + "/view", run, shots_dir(folder))


def _turns(page: Any) -> list[tuple[str, str]]:
    return [
        (str(t.get_attribute("data-turn")), str(t.get_attribute("data-kind") or ""))
        for t in page.locator("#conversation > li.turn").all()
    ]


def _open(site: Site, pages: Pages, size: str, task: str, shot: str) -> Any:
    b = pages(size)
    answer = b.page.goto(site.trial(task))
    assert answer is not None
    assert answer.status == 200
    b.page.screenshot(path=str(site.shots / f"{shot}-{size}.png"), full_page=True)
    assert b.page.evaluate(NO_SIDEWAYS), (shot, size, "scrolls sideways")
    assert b.errors == []
    return b.page


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_33_2_conversation_turns_in_order_with_their_calls(
    site: Site, pages: Pages, size: str
) -> None:
    page = _open(site, pages, size, "cancel", "conversation-pass")
    assert _turns(page) == [("0", "reply"), ("1", "stop"), ("end", "")]
    first, second, end = page.locator("#conversation > li.turn").all()
    assert first.locator(".step").count() == 0  # it asked before it called anything
    assert [s.get_attribute("data-tool") for s in second.locator(".step").all()] == [
        "get_booking",
        "cancel_booking",
    ]
    assert "What is your booking reference?" in first.locator(".msg-agent").inner_text()
    assert "ABC123" in first.locator(".msg-user").inner_text()
    assert "stop" in second.locator(".msg-user").inner_text()
    assert end.locator(".msg-final").inner_text().endswith("done")
    assert "holds what is asserted" in page.locator("#state-verdict").inner_text()
    # The state diff stands beside the trajectory diff on a laptop, under it on a phone.
    trajectory = page.locator("#trajectory-side").bounding_box()
    state = page.locator("#state-side").bounding_box()
    assert trajectory is not None
    assert state is not None
    if size == "laptop":
        assert state["x"] > trajectory["x"] + trajectory["width"] - 1
        assert abs(state["y"] - trajectory["y"]) < 2
    else:
        assert state["y"] >= trajectory["y"] + trajectory["height"] - 1


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_33_2_user_miss_named_and_hostile_text_shown_as_text(
    site: Site, pages: Pages, size: str
) -> None:
    page = _open(site, pages, size, "unscripted", "conversation-miss")
    # The miss is the last message answered; what the agent did after it ends the list.
    assert _turns(page) == [("0", "reply"), ("1", "miss"), ("end", "")]
    miss = page.locator("#conversation li[data-kind=miss]")
    assert "user miss" in miss.locator("[data-end=miss]").inner_text()
    said = miss.locator(".msg-agent .said").inner_text()
    # Markup is text, not markup; the bidi override and ESC are shown as their escapes.
    assert "<script>document.title='pwned'</script>" in said
    assert "\\u202eevil\\x1b[31m" in said
    assert "\u202e" not in said
    assert page.locator("#conversation script").count() == 0
    assert page.title() != "pwned"
    assert page.locator("#reason").get_attribute("data-kind") == "user-miss"


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_33_3_state_diff_names_the_first_differing_path(
    site: Site, pages: Pages, size: str
) -> None:
    page = _open(site, pages, size, "unconfirmed", "state-diff")
    rows = page.locator("#state-diff tbody tr").all()
    assert [r.get_attribute("data-pointer") for r in rows] == [
        "/bookings/ABC123/status",
        "/bookings/ABC123/refunds",
    ]
    assert rows[0].get_attribute("class") == "first"
    assert rows[1].get_attribute("class") == ""
    assert '"cancelled"' in rows[0].inner_text()
    assert '"confirmed"' in rows[0].inner_text()
    # A final state that differs fails the trial (final-state), whatever the output says.
    assert page.locator("#reason").get_attribute("data-kind") == "final-state"
    assert page.locator("#reasons").inner_text().count("/bookings/ABC123/status") >= 1
    # The long reply is shortened; one click shows all of it.
    long = page.locator("#conversation details.long")
    assert long.count() == 1
    assert not long.get_attribute("open")
    assert "Please confirm when it is done." not in long.inner_text()
    long.locator("summary").click()
    assert "Please confirm when it is done." in long.locator("div.said").inner_text()


def test_33_2_conversation_without_a_world_has_no_state_diff(site: Site, pages: Pages) -> None:
    page = _open(site, pages, "phone", "chat-only", "conversation-plain")
    assert _turns(page) == [("0", "reply"), ("end", "")]
    assert page.locator("#diffs").count() == 0


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_33_2_run_page_labels_user_side_and_final_state(
    site: Site, pages: Pages, size: str
) -> None:
    b = pages(size)
    page = b.page
    answer = page.goto(f"{site.url}/run?id={site.run}")
    assert answer is not None
    assert answer.status == 200
    page.screenshot(path=str(site.shots / f"conversation-run-{size}.png"), full_page=True)
    assert page.evaluate(NO_SIDEWAYS)
    labels = {
        str(s.get_attribute("data-kind")): s.inner_text()
        for s in page.locator("#failure-labels .label").all()
    }
    assert labels["user-miss"].endswith("1")
    assert labels["user-error"].endswith("0")
    assert labels["final-state"].endswith("1")
    assert page.locator("#grid a.cell[data-kind=user-miss]").count() == 1
    assert "1 user-miss, 0 user-error" in page.locator("#user-side").inner_text()
    assert b.errors == []


def _pins(page: Any) -> list[tuple[str, str, str, str]]:
    """Each expected call of the trajectory diff: its tool, its pin's turn and whether it held
    ("" without a pin), and what the page says of the pin."""
    rows = []
    for cell in page.locator("#diff td.expected").all():
        pin = cell.locator(".pin")
        if pin.count() == 0:
            rows.append((cell.locator("code").inner_text(), "", "", ""))
            continue
        turn, held = pin.get_attribute("data-pin-turn"), pin.get_attribute("data-held")
        rows.append((cell.locator("code").inner_text(), str(turn), str(held), pin.inner_text()))
    return rows


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_33_5_pinned_calls_show_their_turn_beside_the_expected_call(
    site: Site, pages: Pages, size: str
) -> None:
    page = _open(site, pages, size, "pinned", "pins-held")
    assert _pins(page) == [
        ("get_booking", "1", "yes", "pinned: turn 1"),
        ("cancel_booking", "1", "yes", "pinned: turn 1"),
    ]
    assert [t.inner_text() for t in page.locator("#diff .call-turn").all()] == ["turn 1"] * 2
    assert "Pinned to a turn (x-wopeval-pin): 2, 2 held." in page.locator("#pin-count").inner_text()
    assert page.locator("#diff .pin-miss").count() == 0


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_33_5_a_pin_that_failed_says_the_turn_it_was_made_in_or_never(
    site: Site, pages: Pages, size: str
) -> None:
    page = _open(site, pages, size, "early", "pins-failed")
    page.locator("#trajectory-side").screenshot(path=str(site.shots / f"pins-diff-{size}.png"))
    assert _pins(page) == [
        ("get_booking", "1", "no", "pinned: turn 1, made in turn 0"),
        ("cancel_booking", "1", "yes", "pinned: turn 1"),
        ("refund_booking", "2", "no", "pinned: turn 2, never made"),
    ]
    turns = [t.inner_text() for t in page.locator("#diff .call-turn").all()]
    assert turns == ["turn 0", "turn 1"]  # get_booking before the first message, then cancel
    assert "1 held" in page.locator("#pin-count").inner_text()
    missed = page.locator("#diff .pin[data-held=no]").first
    assert "m-missing" in str(missed.get_attribute("class"))
    reasons = page.locator("#reasons").inner_text()
    assert "expected call #0 get_booking is pinned to turn 1, made in turn 0" in reasons
    # A trajectory without pins (the plainest) shows none.
    plain = _open(site, pages, size, "cancel", "pins-none")
    assert plain.locator("#diff .pin").count() == 0
    assert plain.locator("#pin-count").count() == 0
    assert plain.locator("#diff .call-turn").count() == 0
