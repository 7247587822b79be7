#!/usr/bin/env bash
# The "Measure, gate and publish" step of ci/action.yml. Inputs arrive as
# IN_* environment variables (never interpolated into the script).
set -uo pipefail

context="perfgate"
if [ -n "${IN_PROJECT:-}" ]; then context="perfgate/$IN_PROJECT"; fi

common=()
[ "${IN_FAIL_ON_INCONCLUSIVE:-false}" = "true" ] && common+=(--fail-on-inconclusive)

# perfgate run --artifacts: raw profiles and attribution of each regressed
# benchmark; the next step uploads the directory when it is not empty.
artifacts="$RUNNER_TEMP/perfgate-artifacts"
artifacts_written=""

if [ "${IN_ACCEPT:-false}" = "true" ]; then
  # "Accept this regression" (ci/examples/accept.yml, docs/github.md): the
  # issue_comment or pull_request (labeled) event says who asks and why;
  # the same status context as the gate's.
  args=(accept --context "$context")
  if [ -n "${IN_SERVER_URL:-}" ]; then
    args+=(--server "$IN_SERVER_URL" --project "${IN_PROJECT:-}")
  fi
  [ -n "${IN_COMMENT_AUTHOR:-}" ] && args+=(--comment-author "$IN_COMMENT_AUTHOR")
  exec "$PERFGATE" "${args[@]}"
fi

if [ -n "${IN_REPORT:-}" ]; then
  # Publish-only (the workflow_run half of the fork split).
  report="$IN_REPORT"
  code=0
else
  report="$RUNNER_TEMP/perfgate-report.json"
  rm -rf "$artifacts"
  args=(run --format json --output "$report" --backend "${IN_BACKEND:-perf}" --artifacts "$artifacts")
  if [ -n "${IN_BUDGET:-}" ] || [ -n "${IN_MAX_REPETITIONS:-}" ]; then
    # Sequential sampling (docs/cli.md, "Sequential sampling"): no fixed count.
    [ -n "${IN_BUDGET:-}" ] && args+=(--budget "$IN_BUDGET")
    [ -n "${IN_MAX_REPETITIONS:-}" ] && args+=(--max-repetitions "$IN_MAX_REPETITIONS")
  elif [ -n "${IN_REPETITIONS:-}" ]; then
    args+=(-r "$IN_REPETITIONS")
  fi
  # No repetitions input: perfgate run's default, 10 executions a side for
  # perf, native and rusage, one for callgrind and memcheck, whose counts are
  # deterministic (ten identical executions would cost ten times as long).
  if [ -n "${IN_CONFIG:-}" ]; then
    args+=(--config "$IN_CONFIG")
  elif [ -n "${IN_BASELINE:-}" ] && [ -n "${IN_CANDIDATE:-}" ]; then
    args+=(--name "${IN_NAME:-default}" --baseline "$IN_BASELINE" --candidate "$IN_CANDIDATE")
    # A google/benchmark suite: each of its benchmarks is gated (docs/cli.md#harnesses).
    [ -n "${IN_HARNESS:-}" ] && args+=(--harness "$IN_HARNESS")
    [ -n "${IN_FILTER:-}" ] && args+=(--filter "$IN_FILTER")
  else
    echo "::error title=perfgate::set either the config input or both baseline and candidate"
    exit 2
  fi
  [ -n "${IN_EVENTS:-}" ] && args+=(-e "$IN_EVENTS")
  [ -n "${IN_CPUS:-}" ] && args+=(--cpus "$IN_CPUS")
  # The commit the baseline build was made from (push: github.event.before).
  [ -n "${IN_BASE_SHA:-}" ] && args+=(--base-sha "$IN_BASE_SHA")
  # Which commit a pull request is measured against, and the checkouts that
  # show it (docs/github.md#the-baseline).
  [ -n "${IN_BASELINE_REF:-}" ] && args+=(--baseline-ref "$IN_BASELINE_REF")
  [ -n "${IN_REPO:-}" ] && args+=(--repo "$IN_REPO")
  [ -n "${IN_BASELINE_DIR:-}" ] && args+=(--baseline-dir "$IN_BASELINE_DIR")
  [ -n "${IN_POLICY:-}" ] && args+=(--policy "$IN_POLICY")
  [ -n "${IN_TOP:-}" ] && args+=(--top "$IN_TOP")
  [ "${IN_CACHE_SIM:-false}" = "true" ] && args+=(--cache-sim)
  # One suppression file per line (backend memcheck).
  while IFS= read -r supp; do
    [ -n "$supp" ] && args+=(--suppressions "$supp")
  done <<< "${IN_SUPPRESSIONS:-}"
  if [ -n "${IN_SERVER_URL:-}" ]; then
    # The token travels in PERFGATE_TOKEN, not on the command line.
    args+=(--server "$IN_SERVER_URL" --project "${IN_PROJECT:-default}")
  fi
  # Deterministic backends: the stored baseline run of the baseline commit (docs/github.md#reusing-the-baseline).
  [ "${IN_BASELINE_SOURCE:-measure}" != "measure" ] && args+=(--baseline-source "$IN_BASELINE_SOURCE")
  [ -n "${IN_TOOLCHAIN:-}" ] && args+=(--toolchain "$IN_TOOLCHAIN")
  # Which run feeds the branch's series: by default the event decides (a push's candidate; docs/history.md#which-runs-feed-the-series).
  case "${IN_MAINLINE:-}" in
    '') ;;
    true) args+=(--mainline) ;;
    false) args+=(--no-mainline) ;;
    *) echo "::error title=perfgate::input mainline: expected true, false or empty, got '${IN_MAINLINE}'"; exit 2 ;;
  esac
  [ -n "${IN_TESTBED:-}" ] && args+=(--testbed "$IN_TESTBED")
  "$PERFGATE" "${args[@]}" "${common[@]}" > /dev/null
  code=$?
  if [ -d "$artifacts" ] && [ -n "$(ls -A "$artifacts")" ]; then
    artifacts_written="$artifacts"
    echo "artifacts-dir=$artifacts" >> "$GITHUB_OUTPUT"
  fi
  if [ ! -s "$report" ]; then
    echo "::error title=perfgate::no report was produced (perfgate run exit $code)"
    exit "$code"
  fi
fi

comparison_url=""
if [ -n "${IN_SERVER_URL:-}" ]; then
  id=$(python3 -c 'import json,sys; v=json.load(open(sys.argv[1])).get("comparison_id"); print("" if v is None else v)' "$report")
  if [ -n "$id" ]; then
    # The dashboard's page of the comparison (server/pages).
    project_path=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "${IN_PROJECT:-default}")
    comparison_url="${IN_SERVER_URL%/}/p/$project_path/comparisons/$id"
  fi
fi

if [ "${IN_PUBLISH:-true}" = "true" ]; then
  gh_args=(github --report "$report" --comment "${IN_COMMENT:-always}" --context "$context")
  [ -n "$comparison_url" ] && gh_args+=(--comparison-url "$comparison_url")
  [ "${IN_FAIL_ON_REGRESSION:-true}" = "true" ] || gh_args+=(--no-fail-on-regression)
  [ -n "${IN_EVENT:-}" ] && gh_args+=(--event "$IN_EVENT")
  [ -n "${IN_EXPECT_HEAD_SHA:-}" ] && gh_args+=(--expect-head-sha "$IN_EXPECT_HEAD_SHA")
  [ -n "${IN_COMMENT_AUTHOR:-}" ] && gh_args+=(--comment-author "$IN_COMMENT_AUTHOR")
  # The comment links the run's artifacts only when this run uploads some.
  [ -n "$artifacts_written" ] && gh_args+=(--artifact "${IN_ARTIFACT_NAME:-perfgate-artifacts}")
  "$PERFGATE" "${gh_args[@]}" "${common[@]}"
  publish_code=$?
  # A measurement failure (4) outranks the verdict; otherwise the verdict decides.
  if [ "$code" -ne 4 ] && [ "$code" -ne 2 ]; then code=$publish_code; fi
else
  verdict=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$report")
  {
    echo "verdict=$verdict"
    echo "report-path=$report"
    echo "comparison-url=$comparison_url"
  } >> "$GITHUB_OUTPUT"
  if [ "$code" -eq 1 ] && [ "${IN_FAIL_ON_REGRESSION:-true}" != "true" ]; then code=0; fi
fi
exit "$code"
