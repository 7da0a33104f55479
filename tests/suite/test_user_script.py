"""``x-wopeval-user``: the scripted user's shape and rules, refused before any trial runs with
every error at once, each naming its field; hostile regular expressions refused, never run."""

from __future__ import annotations

from typing import Any

import pytest

from wopeval.suite import FieldError, parse_suite
from wopeval.suite.extensions import EXTENSIONS, advertisement, check_extensions
from wopeval.suite.json_schemas import suite_json_schema
from wopeval.suite.load import validate_suite
from wopeval.suite.user import ScriptedUser
from wopeval.suite.user_regex import BUDGET, MAX_PATTERN_CHARS, MAX_SUBJECT_CHARS, regex_problem

GOLDEN: dict[str, Any] = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
KEY = "x-wopeval-user"


def user(*replies: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"kind": "scripted", "replies": list(replies), **extra}


def reply(when: dict[str, Any], text: Any = "yes", **extra: Any) -> dict[str, Any]:
    return {"when": when, "reply": text, **extra}


def doc(script: Any) -> dict[str, Any]:
    return {
        "suiteId": "core.acme.evals.talk",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [{"taskId": "a", "input": "hi", "expected": GOLDEN, KEY: script}],
    }


def errors_of(script: Any) -> list[str]:
    return [str(error) for error in validate_suite(doc(script))[1]]


def test_33_2_plain_one_task_one_scripted_reply() -> None:
    suite = parse_suite(doc(user(reply({"literal": "ref?"}, "ABC"))))
    script = suite.tasks[0].x_wopeval_user
    assert isinstance(script, ScriptedUser)
    assert script.ordered
    assert script.max_turns == 10
    assert script.replies[0].reply == "ABC"
    assert not script.replies[0].stop


def test_33_2_the_member_is_registered_described_and_advertised() -> None:
    (ext,) = [e for e in EXTENSIONS if e.name == KEY]
    assert ext.scopes == ("task",)
    advertised = {"kinds": ["scripted", "llm"], "order": ["in-order", "keyed"]}
    assert advertisement([KEY]) == {KEY: advertised}
    described = suite_json_schema()["$defs"]["Task"]["properties"][KEY]  # type: ignore[index]
    assert "scripted simulated user" in described["description"]


def test_33_2_0244_G_unadvertised_user_is_refused_naming_the_member() -> None:
    suite = parse_suite(doc(user(reply({"literal": "x"}))))
    assert check_extensions(suite, advertised=["x-wopeval-adaptive"]) == [
        FieldError(f"tasks[0].{KEY}", f"{KEY} is not advertised by this host")
    ]
    assert check_extensions(suite, advertised=[KEY]) == []


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (user(), ".replies: must have at least 1 item"),
        (user(reply({"literal": "x"}), maxTurns=0), ".maxTurns: 0 is less than the minimum 1"),
        (user(reply({"literal": "x"}), maxTurns=2.5), ".maxTurns: expected an integer"),
        (user(reply({"literal": "x"}), order="random"), ".order: 'random' is not one of"),
        (user(reply({"literal": "x"}), onMiss="live"), ".onMiss: 'live' is not one of fail"),
        ({"kind": "robot", "replies": [reply({"literal": "x"})]}, ".kind: 'robot' is not one of"),
        (user(reply({"literal": ""})), ".replies[0].when"),
        (user(reply({"regex": "("})), ".replies[0].when.regex: not a regular expression"),
        (user(reply({"regex": "(a+)+b"})), ".replies[0].when.regex: a group may not be repeated"),
        (user(reply({"regex": "a*a*b"})), ".replies[0].when.regex: too many ways to match"),
        (user(reply({"regex": r"(a)\1"})), ".replies[0].when.regex: a back-reference"),
        (user(reply({"regex": "(?=a)b"})), ".replies[0].when.regex: a look-ahead"),
        (user(reply({"regex": "(?<!a)b"})), ".replies[0].when.regex: a look-behind"),
        (user(reply({"regex": "(?x)a b"})), ".replies[0].when.regex: the verbose flag"),
        (user(reply({"regex": "a" * 501})), ".replies[0].when.regex: a pattern may have at most"),
        (user(reply({"literal": "x"}, stop=True), reply({"literal": "y"})), ".replies[0].stop: a"),
        (user(reply({"literal": "x"}), reply({"literal": "y"}), maxTurns=1), ".maxTurns: 1 is"),
        (user(reply({"literal": "x"}, stop=None)), ".replies[0].stop: null is not allowed"),
        (user(reply({"literal": "x"}), extra=1), ".extra: unknown field"),
        (user({"when": {"literal": "x"}}), ".replies[0].reply: required"),
    ],
)
def test_33_2_malformed_script_refused_before_any_trial_naming_the_field(
    script: dict[str, Any], expected: str
) -> None:
    errors = errors_of(script)
    assert errors, script
    assert any(e.startswith(f"tasks[0].{KEY}{expected}") for e in errors), errors


def test_33_2_every_error_at_once() -> None:
    script = user(
        reply({"regex": "(a+)+"}, stop=True),
        reply({"regex": "["}),
        reply({"literal": "z"}),
        maxTurns=2,
    )
    fields = sorted(e.split(":")[0] for e in errors_of(script))
    assert fields == [
        f"tasks[0].{KEY}.maxTurns",
        f"tasks[0].{KEY}.replies[0].stop",
        f"tasks[0].{KEY}.replies[0].when.regex",
        f"tasks[0].{KEY}.replies[1].when.regex",
    ]


def test_33_2_keyed_allows_a_stop_anywhere_and_fewer_turns_than_replies() -> None:
    script = user(reply({"literal": "x"}, stop=True), reply({"literal": "y"}), order="keyed")
    assert errors_of({**script, "maxTurns": 1}) == []


def test_33_2_json_when_and_structured_reply_are_json_data() -> None:
    good = user(reply({"json": {"ask": "ref"}, "argsMatch": "exact"}, {"ref": "ABC"}))
    assert errors_of(good) == []
    assert errors_of(user(reply({"json": {"a": 1}, "argsMatch": "ignore"})))[0].startswith(
        f"tasks[0].{KEY}.replies[0].when"
    )


@pytest.mark.parametrize(
    "pattern",
    ["(a+)+b", "(a|a)*b", "(a|aa)+$", r"(\w+\s?)+$", "a*a*a*a*b", r"\s*\s*\S", ".*.*=.*", "(.*)*"],
)
def test_33_2_catastrophic_backtracking_patterns_are_refused_without_running(pattern: str) -> None:
    assert regex_problem(pattern) is not None


@pytest.mark.parametrize(
    "pattern",
    [
        "booking reference",
        r"(?i)order #?\d+",
        r"refund|cancel",
        r"[A-Z]{3}\d{3}",
        r"(?:yes|no)\??",
        r"(?P<w>ref)erence",
        r"[\]]+x",
        r"^\d+$",
        r"a{2,}",
    ],
)
def test_33_2_ordinary_patterns_are_accepted(pattern: str) -> None:
    assert regex_problem(pattern) is None


def test_33_2_regex_budget_boundaries() -> None:
    # One unbounded repetition searched over the longest subject: within the budget.
    assert MAX_SUBJECT_CHARS * MAX_SUBJECT_CHARS <= BUDGET
    assert regex_problem("a*b") is None
    assert regex_problem("a?a*b") is None  # 2 × 4000 × 4000 = 32,000,000 ≤ 2**25
    assert regex_problem("a?a?a*b") is not None  # 4 × 4000 × 4000 is over
    assert regex_problem("a{0,1}a*b") is None
    assert regex_problem("a{0,2}a*b") is not None  # 3 × 4000 × 4000 is over
    assert regex_problem("a{3}a*b") is None  # a fixed count is one way
    assert regex_problem("(?:a|b|c)x*") is not None  # 3 branches × 4000 × 4000
    assert regex_problem("(?:a|b)x*") is None
    assert regex_problem("x" * MAX_PATTERN_CHARS) is None
    assert regex_problem("x" * (MAX_PATTERN_CHARS + 1)) is not None
    assert regex_problem("a{,3}b") is None
    assert regex_problem("a{}b") is None  # literal braces
    assert regex_problem("a*?b") is None
    assert regex_problem("a*+b") is None
    assert regex_problem("(?#note)a*b") is None
    assert regex_problem("(?i:a)*") is not None
    assert regex_problem("[(]+x") is None  # a parenthesis in a class opens no group
    assert regex_problem(r"\(a\)+") is None  # an escaped parenthesis neither


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        # Inside a class, * + ? { ( | are plain characters: no choice, no group.
        ("[*+?]a*b", None),
        ("[(]a*", None),
        ("[|]a*b", None),
        ("[^]*]a*b", None),  # ] first after ^ is a member
        ("[]*]a*b", None),  # ] first is a member
        (r"[\]*]a*b", None),  # an escaped ] is a member
        ("[a-c]*[x]*", "too many"),  # two classes, two unbounded repetitions
        # Group openings are no quantifiers: (?: (?P<n> (?i: (?> then the group.
        ("(?:x)a*b", None),
        ("(?P<name>x)a*b", None),
        ("(?i:x)a*b", None),
        ("(?>x)a*b", None),
        ("(?i)a*b", None),
        ("(?#a*b*c*)a*b", None),  # a comment counts nothing
        ("(?:a|b)(?:c|d)x*", "too many"),  # 2 × 2 branches × 4000 × 4000
        ("(?:a|b)(?:c)x*", None),
        ("x(?:a)(?:b)(?:c)y*", None),
        ("(?:(?:a|b)|c)x*", "too many"),  # 3 ways at one level
        (r"\(\)\*x*", None),  # escaped: plain characters
        (r"\0x*", None),  # \0 is a character, not a back-reference
        (r"(a)\1", "a back-reference"),
        ("(?P<a>x)(?P=a)", "a back-reference"),
        ("(?<=a)b", "a look-behind"),
        ("(?!a)b", "a look-ahead"),
        ("(a)?(?(1)b|c)", "a group may not be repeated"),
        ("(?:x)(?(1)b|c)", "not a regular expression"),
        ("a(?(1)b)", "not a regular expression"),
    ],
)
def test_33_2_regex_classes_groups_and_escapes(pattern: str, problem: str | None) -> None:
    found = regex_problem(pattern)
    if problem is None:
        assert found is None, found
    else:
        assert found is not None
        assert found.startswith(problem), found


def test_33_2_a_conditional_group_is_refused() -> None:
    assert regex_problem("(a)(?(1)b|c)") == "a conditional group is not allowed: (?(…"


def test_33_2_in_order_stop_as_the_last_reply_is_accepted() -> None:
    script = user(reply({"literal": "x"}), reply({"literal": "y"}, stop=True), maxTurns=2)
    assert errors_of(script) == []
    refused = errors_of(user(reply({"literal": "x"}, stop=True), reply({"literal": "y"})))
    assert refused == [
        f"tasks[0].{KEY}.replies[0].stop: a stop reply must be the last under order in-order "
        "(it is #0 of 2): the replies after it could never be sent"
    ]


@pytest.mark.parametrize(
    ("pattern", "refused"),
    [
        ("a?a*b", False),  # exactly the budget: 2 × 4000 × 4000
        ("a?b?a*", True),  # one way more
        ("a{3}b{2}x*", False),  # fixed counts are one way each
        ("a{3,3}b{2,2}x*", False),
        ("a{2,3}x*", False),  # 2 ways
        ("a{2,4}x*", True),  # 3 ways
        ("a{,1}b{,1}x*", True),  # 2 × 2 ways
        ("a{,1}x*", False),
        ("a{2,}b*", True),  # {m,} is unbounded
        ("a*?b?", False),  # a lazy ? is no quantifier of its own
        ("a*+b?", False),  # nor a possessive +
        ("a*?(?:b)c", False),
        ("a?b?(?:c)x*", True),  # a group's ways multiply what came before it
        ("x*|(b)", False),
        ("Xa*", False),
        ("((?:a))x*", False),
        ("(?#c)(b)x*", False),
        ("x(?:a)b?y*", False),
        (r"(a)\1a", True),
        (r"(a)0\1", True),
        ("[^a]x*", False),  # a class after ^ ends at its own ]
        ("[]]x*", False),  # a class whose only member is ]
        ("(?i)(?m)a?b*", False),  # a second global flag group is no group either
        ("x(?#c)a?b*", False),  # a comment after the start
        ("(a)(?#c)x*", False),  # a comment after a group ends at its own )
        ("(?#c)(?:a|b|c)x*", True),  # and not at the pattern's last )
    ],
)
def test_33_2_regex_budget_table(pattern: str, refused: bool) -> None:
    assert (regex_problem(pattern) is not None) is refused, regex_problem(pattern)


def test_33_2_too_few_turns_for_the_in_order_script_names_them() -> None:
    assert errors_of(user(reply({"literal": "x"}), reply({"literal": "y"}), maxTurns=1)) == [
        f"tasks[0].{KEY}.maxTurns: 1 is below the 2 in-order replies: the script could never "
        "be played to its end"
    ]


def test_33_2_too_many_ways_names_the_rule() -> None:
    assert regex_problem("a*b*") == (
        "too many ways to match (at most 8,000; *, + and {m,} count 4,000 each, ? 2, {m,n} "
        "n-m+1, a|b 2, and they multiply)"
    )
