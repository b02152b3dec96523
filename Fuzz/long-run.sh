#!/usr/bin/env bash
# The long fuzz runs of BENCHMARKS.md: Fuzz/run.sh TARGET until 10 million executions or
# SECONDS of fuzzing, whichever comes first, at nice 10.
#   Fuzz/long-run.sh TARGET SECONDS
# libFuzzer's -timeout counts wall-clock time, so on a loaded machine a descheduled input can
# pass 1 s. When a run stops on a timeout, its input is run alone three times: if each takes
# under a second it was the load (noted, and fuzzing goes on from the corpus kept so far);
# otherwise it is a hang and the script stops. A crash or leak always stops it.
# Prints one line per segment and the totals; the full libFuzzer logs are in Fuzz/out/long-TARGET-*.log.
set -euo pipefail

main() {
  cd "$(dirname "$0")/.."
  local target=$1 budget=$2
  local executed=0 spent=0 segment=0 load_timeouts=0
  export SWIFT_BACKTRACE=enable=no
  while [ "$spent" -lt "$budget" ] && [ "$executed" -lt 10000000 ]; do
    segment=$((segment + 1))
    local log=Fuzz/out/long-$target-$segment.log start status=0
    start=$(date +%s)
    nice -n 10 Fuzz/run.sh "$target" -runs=$((10000000 - executed)) -max_total_time=$((budget - spent)) > "$log" 2>&1 || status=$?
    spent=$((spent + $(date +%s) - start))
    local units
    units=$(grep -a 'stat::number_of_executed_units' "$log" | tail -1 | awk '{print $2}')
    executed=$((executed + ${units:-0}))
    echo "segment $segment: exit $status, ${units:-0} executions, $spent s so far"
    [ "$status" -eq 0 ] && continue
    local artifact
    artifact=$(grep -ao "Test unit written to [^ ]*" "$log" | tail -1 | awk '{print $5}')
    if grep -aq 'ERROR: libFuzzer: timeout' "$log" && [ -n "$artifact" ]; then
      local slow=0
      for _ in 1 2 3; do
        "Fuzz/out/$target/fuzz-$target" -timeout=1 "$artifact" > /dev/null 2>&1 || slow=1
      done
      if [ "$slow" -eq 0 ]; then
        load_timeouts=$((load_timeouts + 1))
        echo "  timeout on $artifact was the load: it runs alone in under 1 s; going on"
        continue
      fi
      echo "  $artifact is a hang: it takes over 1 s alone"
    else
      echo "  stopped on a finding: $artifact (see $log)"
    fi
    break
  done
  echo "total $target: $executed executions in $spent s ($((executed / (spent > 0 ? spent : 1))) exec/s), $load_timeouts load-induced timeouts"
}

main "$@"
