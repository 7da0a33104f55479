#!/usr/bin/env bash
# Mutation testing (mutmut) of the modules that decide a grade, a verdict or a fail-closed path.
#
#   tools/mutation.sh                                   # every module in [tool.mutmut] only_mutate
#   tools/mutation.sh wopeval.engine.gateway wopeval.grading.trial
#
# Makes its own venv (.mutation-venv, or $MUTATION_VENV) on first use, runs `mutmut run` in this
# checkout (mutmut copies src/ and tests/ into mutants/, both git-ignored) and prints, per module,
# the mutants killed, survived, with no tests and timed out, then each survivor's name
# (`mutmut show NAME` in the venv prints its diff). Exit 0 however many survive: the report is
# the result. Not part of the test run.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${MUTATION_VENV:-.mutation-venv}
if [[ ! -x "$venv/bin/mutmut" ]]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet -e '.[test]' mutmut==3.8.1
fi
unset PYTHONPATH  # the mutated copy under mutants/ must be the wopeval that the tests import

modules=("$@")
if [[ ${#modules[@]} -eq 0 ]]; then
    mapfile -t modules < <("$venv/bin/python" - <<'PY'
import tomllib
for path in tomllib.load(open("pyproject.toml", "rb"))["tool"]["mutmut"]["only_mutate"]:
    print(path.removeprefix("src/").removesuffix(".py").replace("/", "."))
PY
)
fi
patterns=()
for module in "${modules[@]}"; do patterns+=("$module.*"); done

started=$SECONDS
"$venv/bin/mutmut" run "${patterns[@]}" >mutants-run.log 2>&1 || {
    tail -n 40 mutants-run.log
    exit 3
}
"$venv/bin/mutmut" results --all true >mutants-results.txt
echo "mutmut run: $((SECONDS - started)) s wall (log: mutants-run.log)"
"$venv/bin/python" - "${modules[@]}" <<'PY'
import collections
import sys

modules = sys.argv[1:]
counts: dict[str, collections.Counter[str]] = {m: collections.Counter() for m in modules}
survivors: dict[str, list[str]] = {m: [] for m in modules}
for line in open("mutants-results.txt", encoding="utf-8"):
    name, _, status = line.strip().rpartition(": ")
    module = next((m for m in modules if name.startswith(m + ".")), None)
    if module is None:
        continue
    counts[module][status] += 1
    if status != "killed":
        survivors[module].append(f"{status}: {name}")
for module in modules:
    c = counts[module]
    total = sum(c.values())
    print(
        f"{module}: {total} mutants, {c['killed']} killed, {c['survived']} survived, "
        f"{c['no tests']} no tests, {c['timeout']} timeout"
        + "".join(f", {n} {s}" for s, n in c.items() if s not in {"killed", "survived", "no tests", "timeout"})
    )
    for name in survivors[module]:
        print("   ", name)
PY
