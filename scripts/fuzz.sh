#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ (docs/reliability.md, "Fuzzing") and
# prints executions per target.
#
#   scripts/fuzz.sh [seconds-per-target] [target…]     (npm run fuzz -- …)
#
# Default: 60 s per target, all targets. FUZZ_RUNS=<n> stops a target after n
# executions instead (whichever comes first). Needs the nightly toolchain and
# cargo-fuzz (`cargo install cargo-fuzz --locked`). Built without a sanitizer
# (`-s none`: coverage-guided, debug assertions on, panics/aborts/OOM/hangs
# caught); FUZZ_SANITIZER=address switches ASan on. Each target's corpus grows
# in fuzz/corpus/<target> (seeds from fuzz/seeds/<target>); a crash leaves its
# input in fuzz/artifacts/<target>/ and the run of that target fails.
set -uo pipefail
cd "$(dirname "$0")/.."

secs="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(mcp_json stdout_lines tools_list www_authenticate sse_response)
fi
sanitizer="${FUZZ_SANITIZER:-none}"
flags=(+nightly fuzz)
build=(-s "$sanitizer" -a)

cargo "${flags[@]}" build "${build[@]}" || exit 1

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
status=0
printf '%-18s %12s %10s %8s %8s %s\n' target executions exec/s corpus rss_mb result
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t"
  extra=(-max_total_time="$secs" -timeout=10 -print_final_stats=1)
  [ -n "${FUZZ_RUNS:-}" ] && extra+=(-runs="$FUZZ_RUNS")
  cargo "${flags[@]}" run "${build[@]}" "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- "${extra[@]}" \
    >"$logs/$t.log" 2>&1
  rc=$?
  stat() { grep -o "stat::$1: *[0-9]*" "$logs/$t.log" | grep -o '[0-9]*$' | tail -1; }
  result=ok
  if [ $rc -ne 0 ]; then
    result="CRASH (exit $rc): $(ls -t "fuzz/artifacts/$t" 2>/dev/null | head -1)"
    status=1
    grep -m3 -E "panicked|ERROR: libFuzzer" "$logs/$t.log" | sed 's/^/    /'
  fi
  corpus=$(ls "fuzz/corpus/$t" | wc -l)
  printf '%-18s %12s %10s %8s %8s %s\n' "$t" "$(stat number_of_executed_units)" \
    "$(stat average_exec_per_sec)" "$corpus" "$(stat peak_rss_mb)" "$result"
done
exit $status
