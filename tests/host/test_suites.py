"""``evalSuiteRef`` grammar and the suite catalog (configured directories, then built-ins)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.host.helpers import SUITES, eval_body, host_config, running_host
from wopeval.host import create as create_module
from wopeval.host import suites as suites_module
from wopeval.host.suites import BadSuiteRef, SuiteCatalog, SuiteGone, SuiteRef, parse_ref
from wopeval.suite import SuiteError


@pytest.mark.parametrize(
    ("ref", "parsed"),
    [
        ("suite://core.acme.evals.x@1.2.3", SuiteRef("core.acme.evals.x", "1.2.3")),
        ("suite://core.acme.evals.x", SuiteRef("core.acme.evals.x", None)),
        ("core.acme.evals.x@0.0.1", SuiteRef("core.acme.evals.x", "0.0.1")),
        ("core.acme.evals.x", SuiteRef("core.acme.evals.x", None)),
        ("suite://conformance-eval-trials", SuiteRef("conformance-eval-trials", None)),
    ],
)
def test_suite_ref_grammar(ref: str, parsed: SuiteRef) -> None:
    assert parse_ref(ref) == parsed


@pytest.mark.parametrize(
    "ref", ["", "suite://", "suite://Core.X", "core.acme.evals.x@1", "x@latest", "a b", "s://x"]
)
def test_suite_ref_grammar_rejects(ref: str) -> None:
    with pytest.raises(BadSuiteRef):
        parse_ref(ref)


def test_catalog_resolves_exact_newest_and_short_names() -> None:
    catalog = SuiteCatalog([SUITES], builtins=False)
    demo = "core.wopeval.evals.host-demo"
    newest = catalog.find(parse_ref(f"suite://{demo}"))
    exact = catalog.find(parse_ref(f"{demo}@1.0.0"))
    short = catalog.find(parse_ref("conformance-eval-hosttest"))
    assert newest is not None
    assert newest.version == "1.1.0"
    assert exact is not None
    assert exact.version == "1.0.0"
    assert short is not None
    assert short.suite_id.endswith(".conformance-eval-hosttest")
    assert catalog.find(parse_ref(f"{demo}@2.0.0")) is None
    assert catalog.fixture_ids() == ["conformance-eval-hosttest"]


def test_catalog_first_directory_wins_and_broken_files_are_skipped(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    doc = json.loads((SUITES / "plain.json").read_text())
    (first / "plain.json").write_text(json.dumps({**doc, "tasks": doc["tasks"][:1]}))
    (second / "plain.json").write_text(json.dumps(doc))
    (second / "junk.json").write_text("{not json")
    (second / "notes.txt").write_text("not a suite")
    catalog = SuiteCatalog([first, second], builtins=False)
    entry = catalog.find(parse_ref("core.wopeval.evals.plain"))
    assert entry is not None
    assert entry.path == first / "plain.json"
    assert len(catalog.load(entry).tasks) == 1
    assert catalog.suite_ids() == ["core.wopeval.evals.plain"]


def test_catalog_finds_added_files_and_reloads_changed_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(suites_module, "_RESCAN_INTERVAL_S", 0.0)
    catalog = SuiteCatalog([tmp_path], builtins=False)
    ref = parse_ref("core.wopeval.evals.plain")
    assert catalog.find(ref) is None
    doc = json.loads((SUITES / "plain.json").read_text())
    target = tmp_path / "plain.json"
    target.write_text(json.dumps(doc))
    entry = catalog.find(ref)
    assert entry is not None
    assert len(catalog.load(entry).tasks) == 3
    doc["tasks"][0]["expected"]["kind"] = "fuzzy"
    target.write_text(json.dumps(doc))
    os.utime(target, ns=(1, 1))
    with pytest.raises(SuiteError) as broken:
        catalog.load(entry)
    assert broken.value.errors[0].path == "tasks[0].expected.kind"
    target.unlink()
    with pytest.raises(SuiteGone):
        catalog.load(entry)


def test_cached_answers_only_what_load_parsed_from_the_file_as_it_is(tmp_path: Path) -> None:
    doc = json.loads((SUITES / "plain.json").read_text())
    target = tmp_path / "plain.json"
    target.write_text(json.dumps(doc))
    catalog = SuiteCatalog([tmp_path], builtins=False)
    ref = parse_ref("core.wopeval.evals.plain")
    assert catalog.cached(ref) is None  # indexed, never parsed
    entry = catalog.find(ref)
    assert entry is not None
    loaded = catalog.load(entry)
    assert catalog.cached(ref) is loaded
    assert catalog.cached(parse_ref("core.wopeval.evals.plain@9.9.9")) is None
    stamp = target.stat()
    # Same size and mtime, another file (an atomic replace): not the parsed one.
    replacement = tmp_path / "next.tmp"
    replacement.write_text(json.dumps(doc))
    os.utime(replacement, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    os.replace(replacement, target)
    assert catalog.cached(ref) is None
    again = catalog.load(entry)
    assert again is not loaded
    assert catalog.cached(ref) is again
    # Same file and mtime, another size.
    target.write_text(json.dumps({**doc, "tasks": doc["tasks"][:1]}))
    os.utime(target, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert catalog.cached(ref) is None
    assert len(catalog.load(entry).tasks) == 1
    target.unlink()
    assert catalog.cached(ref) is None


def test_cached_never_scans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(suites_module, "_RESCAN_INTERVAL_S", 0.0)
    catalog = SuiteCatalog([tmp_path], builtins=False)
    (tmp_path / "plain.json").write_text((SUITES / "plain.json").read_text())
    ref = parse_ref("core.wopeval.evals.plain")
    assert catalog.cached(ref) is None
    assert catalog.suite_ids() == []  # the added file waits for find's re-scan
    assert catalog.find(ref) is not None


async def test_a_repeated_create_reuses_the_parsed_suite_until_its_file_changes(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = json.loads((SUITES / "plain.json").read_text())
    target = tmp_path / "plain.json"
    target.write_text(json.dumps(doc))
    loads: list[str] = []
    real = create_module.load_suite_ref

    def counting(state: object, ref: str) -> object:
        loads.append(ref)
        return real(state, ref)  # type: ignore[arg-type]

    monkeypatch.setattr(create_module, "load_suite_ref", counting)
    config = host_config(suiteDirectories=[str(tmp_path)])
    body = eval_body("suite://core.wopeval.evals.plain")
    async with running_host(store_url, config) as host:
        first, second = await host.create(body), await host.create(body)
        assert len(loads) == 1  # the second create took the parsed suite, no worker thread
        target.write_text(json.dumps({**doc, "tasks": doc["tasks"][:1]}))
        os.utime(target, ns=(1, 1))
        changed = await host.create(body)
        doc["tasks"][0]["expected"]["kind"] = "fuzzy"
        target.write_text(json.dumps(doc))
        os.utime(target, ns=(2, 2))
        broken = await host.create(body)
        records = [await host.state.store.get_run(r.json()["runId"]) for r in (first, changed)]
    assert [r.status_code for r in (first, second, changed)] == [201, 201, 201]
    assert len(loads) == 3
    assert [len(r.suite_document["tasks"]) for r in records if r is not None] == [3, 1]
    assert broken.status_code == 400
    assert broken.json()["details"]["field"] == "tasks[0].expected.kind"
