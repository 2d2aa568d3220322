#!/usr/bin/env bash
# A long fuzz campaign, one harness at a time (the machine is shared): each harness runs in
# chunks until it has executed TARGET inputs in total. Everything goes under OUT:
#   OUT/<harness>/corpus      the growing corpus (seeded from fuzz/corpus/<harness>)
#   OUT/<harness>/artifacts   crash-*, timeout-*, oom-* inputs (each one a bug to fix)
#   OUT/<harness>/chunk-N.log libFuzzer's output per chunk
#   OUT/summary.tsv           harness, executions, seconds, crash artifacts (rewritten per chunk)
# Usage: fuzz/campaign.sh BUILD_DIR [OUT] [TARGET] [CHUNK_SECONDS]
#   e.g. nohup nice -n 19 fuzz/campaign.sh build-san /work/helpers/fuzz-campaign 10000000 &
set -uo pipefail
src=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
out=${2:-$PWD/fuzz-campaign}
target=${3:-10000000}
chunk=${4:-1800}
harnesses=${HARNESSES:-load check opt run text test_data save}
mkdir -p "$out"
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

execs_of() { # total executions recorded in a harness's chunk logs
  cat "$out/$1"/chunk-*.log 2>/dev/null |
    awk '/stat::number_of_executed_units/ {n += $2} END {print n + 0}'
}
secs_of() {
  cat "$out/$1"/chunk-*.log 2>/dev/null | awk '/^#campaign-seconds/ {n += $2} END {print n + 0}'
}
summary() {
  { printf 'harness\texecutions\tseconds\tcrash_artifacts\n'
    for h in $harnesses; do
      printf '%s\t%s\t%s\t%s\n' "$h" "$(execs_of "$h")" "$(secs_of "$h")" \
        "$(ls "$out/$h/artifacts" 2>/dev/null | wc -l)"
    done; } > "$out/summary.tsv"
}

for h in $harnesses; do
  mkdir -p "$out/$h/corpus" "$out/$h/artifacts"
  n=$(ls "$out/$h"/chunk-*.log 2>/dev/null | wc -l)
  dict="$src/onnx.dict"
  [ -f "$src/$h.dict" ] && dict="$src/$h.dict"
  while [ "$(execs_of "$h")" -lt "$target" ]; do
    before=$(execs_of "$h")
    n=$((n + 1))
    log="$out/$h/chunk-$n.log"
    start=$(date +%s)
    "$build/bin/fuzz_$h" -max_total_time="$chunk" -timeout=10 -rss_limit_mb=2048 \
      -dict="$dict" -print_final_stats=1 -artifact_prefix="$out/$h/artifacts/" \
      "$out/$h/corpus" "$src/corpus/$h" > "$log" 2>&1
    echo "#campaign-seconds $(( $(date +%s) - start ))" >> "$log"
    summary
    # A chunk that executed nothing (missing binary, unwritable folder) would loop for ever.
    if [ "$(execs_of "$h")" -le "$before" ]; then
      echo "campaign: fuzz_$h made no progress, see $log" >&2
      exit 1
    fi
    # A harness that keeps crashing needs a fix, not more CPU.
    if [ "$(ls "$out/$h/artifacts" | wc -l)" -ge 20 ]; then break; fi
  done
done
summary
echo "campaign done" >> "$out/summary.tsv"
