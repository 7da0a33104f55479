"""The suites a host serves, and how ``evalSuiteRef`` names one.

Reference grammar (docs/host.md)::

    suite://<suiteId>@<version>     one exact version
    suite://<suiteId>               the newest version (semver order)
    <suiteId>[@<version>]           the same, without the scheme
    [suite://]<name>[@<version>]    the part after ``.evals.``, when exactly one suiteId has it
                                    (so a conformance fixture id such as
                                    ``conformance-eval-trials`` names its suite)

Suites come from the configured directories (in order), then wopeval's packaged suites
(``wopeval/data/suites``). Files are ``*.json``, ``*.yaml`` and ``*.yml``, found recursively.
A file is indexed by the ``suiteId`` and ``version`` it declares; it is fully validated only when
a run asks for it, so a broken suite is refused at create with ``400 validation_error`` naming
its field. A file whose id cannot be read is not indexed (and logged). The first file to declare
a ``(suiteId, version)`` wins. An unknown reference triggers one re-scan (at most once a second)
so that suites added while the host runs are found.

A hostile or broken file is isolated: every file is read within :mod:`wopeval.suite.bounds`,
and whatever goes wrong with one file (beyond a bound, unreadable, even an unexpected error)
leaves it out of the index, reported in :attr:`SuiteCatalog.rejected` and the log, while the
others keep serving. A re-scan stats every file but re-reads only new or changed ones (keyed by
size and mtime), so an unknown reference costs a directory walk, never a re-parse of every
suite. A parsed suite is kept while its file keeps its identity (device, inode, size, mtime):
:meth:`SuiteCatalog.cached` answers a repeated reference on the event loop with one ``stat``;
otherwise the host calls :meth:`find` and :meth:`load` in a worker thread (parsing a big suite
never stalls the event loop); a lock serializes scans. With a parsed suite the catalog keeps
the document and digests a run of it stores (:func:`~wopeval.service.prepared.prepare_suite`),
made once per parse; a plan takes them only for that very suite object.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from wopeval.errors import NotFoundError, UserError
from wopeval.service.prepared import PreparedSuite, prepare_suite
from wopeval.suite import SuiteError, parse_suite
from wopeval.suite.load import SUITE_SUFFIXES, read_document
from wopeval.suite.models import SEMVER_PATTERN, SUITE_ID_PATTERN, AgentEvalSuite

log = logging.getLogger("wopeval.host")

SCHEME = "suite://"
FIXTURE_PREFIX = "conformance-"
_SUITE_ID_RE = re.compile(SUITE_ID_PATTERN)
_SEMVER_RE = re.compile(SEMVER_PATTERN)
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_RESCAN_INTERVAL_S = 1.0


class BadSuiteRef(UserError):
    """``evalSuiteRef`` does not follow the grammar."""


class SuiteGone(NotFoundError):
    """An indexed suite file changed identity or disappeared."""


@dataclass(frozen=True)
class SuiteRef:
    name: str  # a suiteId, or the short name after ``.evals.``
    version: str | None


def parse_ref(ref: str) -> SuiteRef:
    body = ref.removeprefix(SCHEME)
    name, at, version = body.partition("@")
    if at and not _SEMVER_RE.fullmatch(version):
        raise BadSuiteRef(f"version {version!r} is not a semver x.y.z")
    if not (_SUITE_ID_RE.fullmatch(name) or _NAME_RE.fullmatch(name)):
        raise BadSuiteRef(
            f"{ref!r} is not suite://<suiteId>[@<version>] (suiteId like core.acme.evals.name)"
        )
    return SuiteRef(name, version if at else None)


def short_name(suite_id: str) -> str:
    return suite_id.rpartition(".evals.")[2]


def _semver_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def builtin_suite_dir() -> Path | None:
    root = resources.files("wopeval").joinpath("data", "suites")
    path = Path(str(root))
    return path if path.is_dir() else None


@dataclass(frozen=True)
class SuiteFile:
    suite_id: str
    version: str
    path: Path


class SuiteCatalog:
    """An index of suite files by ``suiteId`` and version, with parsed suites cached by mtime."""

    def __init__(self, directories: list[Path], builtins: bool = True) -> None:
        self.directories = list(directories)
        builtin = builtin_suite_dir() if builtins else None
        if builtin is not None:
            self.directories.append(builtin)
        self._index: dict[str, dict[str, SuiteFile]] = {}
        self._parsed: dict[Path, tuple[tuple[int, int, int, int], AgentEvalSuite]] = {}
        # Each parsed suite's document and digests, by the suite object's id (held while parsed)
        self._prepared: dict[int, PreparedSuite] = {}
        # Live parses (ids, as in ``_prepared``) that passed the host's suite checks once.
        self._checked: set[int] = set()
        self._declared: dict[Path, tuple[tuple[int, int], SuiteFile | None]] = {}
        self.rejected: dict[Path, str] = {}  # files left out of the index, and why
        self._scanned_at = float("-inf")
        self._lock = threading.Lock()
        self.scan()

    def scan(self) -> None:
        with self._lock:
            self._scan()

    def _declared_cached(self, path: Path) -> SuiteFile | None:
        try:
            info = path.stat()
        except OSError:
            return None
        stamp = (info.st_size, info.st_mtime_ns)
        cached = self._declared.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        found, why = _declared(path)
        self._declared[path] = (stamp, found)
        if why is None:
            self.rejected.pop(path, None)
        else:
            self.rejected[path] = why
        return found

    def _scan(self) -> None:
        index: dict[str, dict[str, SuiteFile]] = {}
        seen: set[Path] = set()
        for directory in self.directories:
            for path in sorted(p for p in directory.rglob("*") if _is_suite_file(p)):
                seen.add(path)
                found = self._declared_cached(path)
                if found is None:
                    continue
                versions = index.setdefault(found.suite_id, {})
                if found.version in versions:
                    log.warning(
                        "%s: %s@%s is already served by %s",
                        path,
                        found.suite_id,
                        found.version,
                        versions[found.version].path,
                    )
                    continue
                versions[found.version] = found
        for gone in set(self._declared) - seen:
            del self._declared[gone]
            self.rejected.pop(gone, None)
        self._index = index
        self._scanned_at = time.monotonic()

    def suite_ids(self) -> list[str]:
        return sorted(self._index)

    def fixture_ids(self) -> list[str]:
        """Short names of the served ``conformance-*`` suites (discovery ``fixtures``)."""
        names = {short_name(s) for s in self._index}
        return sorted(n for n in names if n.startswith(FIXTURE_PREFIX))

    def find(self, ref: SuiteRef) -> SuiteFile | None:
        found = self._find(ref)
        if found is None and time.monotonic() - self._scanned_at >= _RESCAN_INTERVAL_S:
            with self._lock:  # a concurrent caller's scan counts: look again before scanning
                found = self._find(ref)
                if found is None and time.monotonic() - self._scanned_at >= _RESCAN_INTERVAL_S:
                    self._scan()
                    found = self._find(ref)
        return found

    def _find(self, ref: SuiteRef) -> SuiteFile | None:
        versions = self._index.get(ref.name)
        if versions is None and not _SUITE_ID_RE.fullmatch(ref.name):
            owners = [s for s in self._index if short_name(s) == ref.name]
            versions = self._index[owners[0]] if len(owners) == 1 else None
        if not versions:
            return None
        if ref.version is not None:
            return versions.get(ref.version)
        return versions[max(versions, key=_semver_key)]

    def load(self, entry: SuiteFile) -> AgentEvalSuite:
        """The validated suite of ``entry``; raises :class:`SuiteError` naming each field.

        Raises :class:`SuiteGone` when the file vanished or now declares another id or version
        (the index is re-scanned; the caller answers as for an unknown reference).
        """
        try:
            stamp = _identity(entry.path)
        except OSError as exc:
            self.scan()
            raise SuiteGone(str(entry.path)) from exc
        cached = self._parsed.get(entry.path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        declared, _ = _declared(entry.path)
        if declared != entry:
            self.scan()
            raise SuiteGone(str(entry.path))
        suite = parse_suite(read_document(entry.path), str(entry.path))
        prepared = prepare_suite(suite)
        self._prepared[id(suite)] = prepared
        replaced = self._parsed.get(entry.path)
        self._parsed[entry.path] = (stamp, suite)
        if replaced is not None:
            self._prepared.pop(id(replaced[1]), None)
            self._checked.discard(id(replaced[1]))
        return suite

    def prepared(self, suite: AgentEvalSuite) -> PreparedSuite | None:
        """The document and digests made when :meth:`load` parsed ``suite`` (this very object,
        still the parse of its file), else None."""
        prepared = self._prepared.get(id(suite))
        return prepared if prepared is not None and prepared.suite is suite else None

    def checked(self, suite: AgentEvalSuite) -> bool:
        """True when :meth:`mark_checked` was called for this very object, still the parse of
        its file: the host's checks of a suite (its facets against the configuration) are
        made once per parse, not once per create."""
        return id(suite) in self._checked and self.prepared(suite) is not None

    def mark_checked(self, suite: AgentEvalSuite) -> None:
        """``suite`` passed the checks; remembered only for a parse this catalog made."""
        if self.prepared(suite) is not None:
            self._checked.add(id(suite))

    def cached(self, ref: SuiteRef) -> AgentEvalSuite | None:
        """The suite ``ref`` names if the index has it and :meth:`load` parsed its file as it
        is now (same identity: one ``stat``), else None. No walk, read or parse: cheap enough
        for the event loop; on None the caller takes :meth:`find` and :meth:`load`."""
        entry = self._find(ref)
        cached = self._parsed.get(entry.path) if entry is not None else None
        if entry is None or cached is None:
            return None
        try:
            stamp = _identity(entry.path)
        except OSError:
            return None
        return cached[1] if cached[0] == stamp else None


def _identity(path: Path) -> tuple[int, int, int, int]:
    """A file's identity for the parse cache: replaced (new inode), resized or touched, it is
    read again."""
    info = path.stat()
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def _is_suite_file(path: Path) -> bool:
    return path.suffix.lower() in SUITE_SUFFIXES and path.is_file()


def _declared(path: Path) -> tuple[SuiteFile | None, str | None]:
    """The ``(suiteId, version)`` a file declares, without validating the rest; or None and
    why the file is not indexed (logged). Never raises: one bad file must not stop the rest."""
    why = _why_not(path)
    if isinstance(why, SuiteFile):
        return why, None
    log.warning("%s: not indexed: %s", path, why)
    return None, why


def _why_not(path: Path) -> SuiteFile | str:
    try:
        data = read_document(path)
    except SuiteError as exc:
        return str(exc)
    except Exception as exc:  # isolate the unforeseen too: this file only
        return f"cannot be read ({type(exc).__name__}: {exc})"[:500]
    if not isinstance(data, dict):
        return "not a suite object"
    suite_id, version = data.get("suiteId"), data.get("version")
    if not (isinstance(suite_id, str) and _SUITE_ID_RE.fullmatch(suite_id)):
        return "no valid suiteId"
    if not (isinstance(version, str) and _SEMVER_RE.fullmatch(version)):
        return "no valid version"
    return SuiteFile(suite_id, version, path)
