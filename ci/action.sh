#!/usr/bin/env bash
# The logic of the wopeval GitHub Action (action.yml), kept in a script so it runs the same
# anywhere (a GitLab job, a laptop, the test that runs it on a local git repository).
#
# Inputs, from the environment:
#   WOPEVAL_SUITE           the suite file (required)
#   WOPEVAL_BASELINE_STORE  the store of the main branch's runs (default .wopeval/baseline.db):
#                           on the main branch the run is recorded there (the next baseline);
#                           elsewhere its newest completed run of the suite is the baseline
#   WOPEVAL_STORE           where a run off the main branch is recorded
#                           (default: a fresh file in $RUNNER_TEMP or /tmp)
#   WOPEVAL_PR_SUBSET       off the main branch, run only the first N tasks
#   WOPEVAL_PR_SAMPLE       off the main branch, run N tasks drawn with WOPEVAL_SEED (default 0)
#   WOPEVAL_MAIN_BRANCH     the branch that runs the whole suite (default main)
#   WOPEVAL_ARGS            further options for `wopeval ci` (split on spaces)
#   WOPEVAL                 the command to call (default wopeval)
# The branch is read from GITHUB_REF_NAME / GITHUB_BASE_REF (GitHub), CI_COMMIT_BRANCH (GitLab),
# else `git rev-parse --abbrev-ref HEAD`. The report goes to $GITHUB_STEP_SUMMARY when set, else
# to WOPEVAL_REPORT (default wopeval-ci.md). The exit code is `wopeval ci`'s: 0 pass, 1 gate
# failed or regressed, 2 bad input, 3 outage, 4 cannot decide.
set -euo pipefail

suite="${WOPEVAL_SUITE:?WOPEVAL_SUITE: the suite file to run is required}"
baseline_store="${WOPEVAL_BASELINE_STORE:-.wopeval/baseline.db}"
main_branch="${WOPEVAL_MAIN_BRANCH:-main}"
wopeval_cmd="${WOPEVAL:-wopeval}"

branch="${GITHUB_HEAD_REF:-${GITHUB_REF_NAME:-${CI_COMMIT_BRANCH:-${CI_MERGE_REQUEST_SOURCE_BRANCH_NAME:-}}}}"
if [ -z "$branch" ] && git rev-parse --git-dir >/dev/null 2>&1; then
  branch="$(git rev-parse --abbrev-ref HEAD)"
fi
commit=""
if git rev-parse --git-dir >/dev/null 2>&1; then
  commit="$(git rev-parse --short HEAD)"
fi

args=(ci "$suite")
if [ "$branch" = "$main_branch" ] && [ -z "${GITHUB_HEAD_REF:-}" ]; then
  # the main branch: the whole suite, recorded as the next baseline, compared with the last one
  args+=(--store "$baseline_store")
  if [ -e "$baseline_store" ]; then
    args+=(--baseline-from "$baseline_store")
  else
    mkdir -p "$(dirname "$baseline_store")"
    echo "wopeval ci: no baseline store yet ($baseline_store): this run becomes the first" >&2
  fi
else
  store="${WOPEVAL_STORE:-}"
  if [ -z "$store" ]; then
    store="$(mktemp -d "${RUNNER_TEMP:-/tmp}/wopeval-ci.XXXXXX")/run.db"
  fi
  args+=(--store "$store" --baseline-from "$baseline_store")
  if [ -n "${WOPEVAL_PR_SUBSET:-}" ]; then
    args+=(--subset "$WOPEVAL_PR_SUBSET")
  elif [ -n "${WOPEVAL_PR_SAMPLE:-}" ]; then
    args+=(--sample "$WOPEVAL_PR_SAMPLE" --seed "${WOPEVAL_SEED:-0}")
  fi
fi
if [ -z "${GITHUB_STEP_SUMMARY:-}" ]; then
  args+=(--report "${WOPEVAL_REPORT:-wopeval-ci.md}")
fi
if [ -n "${WOPEVAL_ARGS:-}" ]; then
  read -r -a extra <<<"$WOPEVAL_ARGS"
  args+=("${extra[@]}")
fi

echo "wopeval ci: branch ${branch:-?} commit ${commit:-?}: $wopeval_cmd ${args[*]}" >&2
# shellcheck disable=SC2086 # WOPEVAL may be a command with arguments (python -m wopeval)
exec $wopeval_cmd "${args[@]}"
