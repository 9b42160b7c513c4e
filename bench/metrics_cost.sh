#!/usr/bin/env bash
# What metrics cost (issue 19): bench/tcp_path_bench's tiny cross-task step and 16 MB push,
# with every task serving metrics (TW_METRICS_PORT=0: the ps's `tw server` and the
# benchmark's worker task record and serve them) and without, in turns: PAIRS pairs of runs,
# the order within each pair alternating. Prints each run's figures and the medians.
#
#   bench/metrics_cost.sh [BUILD_DIR] [PAIRS]        (defaults: build, 5)
set -euo pipefail
build=${1:-build}
pairs=${2:-5}
bench="$build/bench/tcp_path_bench"
[ -x "$bench" ] || { echo "metrics_cost: $bench is not built" >&2; exit 1; }

run() {  # $1: on|off -> "fetch_us push_gbps"
  local out
  if [ "$1" = on ]; then
    out=$(TW_METRICS_PORT=0 "$bench" --rounds 3 --sizes 16 --tiny 2000 2>/dev/null)
  else
    out=$(env -u TW_METRICS_PORT "$bench" --rounds 3 --sizes 16 --tiny 2000 2>/dev/null)
  fi
  local fetch push
  fetch=$(grep '^| fetch a scalar' <<<"$out" | awk -F'|' '{print $3}' | tr -dc '0-9.')
  push=$(grep '^| 16 MB push' <<<"$out" | awk -F'|' '{print $3}' | tr -dc '0-9.')
  echo "$fetch $push"
}

on=() off=()
echo "| pair | metrics | tiny step p50 (us) | 16 MB push (GB/s) |"
echo "|---|---|---|---|"
for ((i = 1; i <= pairs; i++)); do
  order=(on off)
  ((i % 2 == 0)) && order=(off on)
  for m in "${order[@]}"; do
    r=$(run "$m")
    echo "| $i | $m | ${r% *} | ${r#* } |"
    if [ "$m" = on ]; then on+=("$r"); else off+=("$r"); fi
  done
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
on_fetch=$(printf '%s\n' "${on[@]}" | cut -d' ' -f1 | median)
off_fetch=$(printf '%s\n' "${off[@]}" | cut -d' ' -f1 | median)
on_push=$(printf '%s\n' "${on[@]}" | cut -d' ' -f2 | median)
off_push=$(printf '%s\n' "${off[@]}" | cut -d' ' -f2 | median)
echo
echo "| median of $pairs runs | metrics off | metrics on | on / off |"
echo "|---|---|---|---|"
awk -v a="$off_fetch" -v b="$on_fetch" 'BEGIN {printf "| tiny step p50 | %.0f us | %.0f us | %.3fx |\n", a, b, b / a}'
awk -v a="$off_push" -v b="$on_push" 'BEGIN {printf "| 16 MB push | %.2f GB/s | %.2f GB/s | %.3fx |\n", a, b, b / a}'
