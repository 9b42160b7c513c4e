#!/usr/bin/env bash
# Word-count throughput on the Linux kernel documentation (Debian's linux-doc-6.1, about
# 3,200 .rst.txt files, 24 MB) against `LC_ALL=C wc -w` on the same files in the same run,
# and the start-up time of a 1 ps + 8 worker cluster. Prints a Markdown table for
# docs/performance.md.
#
#   bench/wordcount_bench.sh [BUILD_DIR] [REPETITIONS] [BASELINE_WORDCOUNT]
#                                                   (defaults: build, 5, none)
#
# BASELINE_WORDCOUNT, when given, is another build of examples/wordcount (say, of an
# earlier commit: git worktree add ../base COMMIT && cmake -S ../base -B ../base/build -G Ninja
# && ninja -C ../base/build wordcount), run in turns with this one: the table then shows
# what this build's counting phase costs against it, with 1 and 2 map tasks.
#
# Needs tw, examples/wordcount and bench/wordcount_bench_startup built in BUILD_DIR and
# the linux-doc-6.1 package (scripts/setup.sh installs it). Runs are interleaved (wc, one
# map, two maps, wc, ...) so that noise from other load hits all alike; medians are shown.
#
# What is timed:
#   wc -w         wall time of `LC_ALL=C wc -w --files0-from=LIST` (the process, every file).
#   word count    the counting phase the reduce task reports: from the moment every task is
#                 up and the counter initialized to the last map's report (the maps take
#                 names from the queue, read and count the files, AssignAdd the counts);
#                 "launch to exit" is the whole `tw launch`, process start-up and shutdown
#                 included.
#   start-up      from starting `tw launch --cluster ps=1,worker=8` to the moment the
#                 chief's session has reached every task (bench/wordcount_bench_startup.cc).
set -euo pipefail

build=${1:-build}
reps=${2:-5}
baseline=${3:-}
tw="$build/tools/tw"
wordcount="$build/examples/wordcount"
startup="$build/bench/wordcount_bench_startup"
corpus=/usr/share/doc/linux-doc-6.1
for program in "$tw" "$wordcount" "$startup"; do
  [ -x "$program" ] || { echo "wordcount_bench: $program is not built" >&2; exit 1; }
done
[ -z "$baseline" ] || [ -x "$baseline" ] || {
  echo "wordcount_bench: the baseline $baseline is not an executable" >&2; exit 1; }
[ -d "$corpus" ] || { echo "wordcount_bench: $corpus is missing: bash scripts/setup.sh" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
find "$corpus" -type f -name '*.rst.txt' | LC_ALL=C sort > "$work/list"
tr '\n' '\0' < "$work/list" > "$work/list0"
files=$(wc -l < "$work/list")
bytes=$(wc -c --files0-from="$work/list0" | tail -n 1 | awk '{print $1}')
xargs -0 cat < "$work/list0" > /dev/null  # the page cache holds the corpus for every run

now_ns() { date +%s%N; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
minimum() { sort -g | head -n 1; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f\n", (b - a) / 1e9}'; }

: > "$work/wc.times"
for maps in 1 2; do
  : > "$work/count$maps.times"; : > "$work/launch$maps.times"; : > "$work/base$maps.times"
done
: > "$work/startup.times"
expected=""
for ((r = 1; r <= reps; r++)); do
  t0=$(now_ns)
  wc_total=$(LC_ALL=C wc -w --files0-from="$work/list0" | tail -n 1 | awk '{print $1}')
  t1=$(now_ns)
  seconds "$t0" "$t1" >> "$work/wc.times"
  expected=$wc_total
  for maps in 1 2; do
    t0=$(now_ns)
    NO_COLOR=1 "$tw" launch --cluster "files=1,reduce=1,map=$maps" -- "$wordcount" "$work/list" \
      > "$work/out" 2> "$work/err" || { cat "$work/err" >&2; exit 1; }
    t1=$(now_ns)
    seconds "$t0" "$t1" >> "$work/launch$maps.times"
    total=$(sed -n 's/^\[reduce:0\] final total: \([0-9]*\)$/\1/p' "$work/out")
    if [ "$total" != "$wc_total" ]; then
      echo "wordcount_bench: $maps map(s) counted '$total' words, wc -w $wc_total" >&2
      exit 1
    fi
    sed -n 's/^\[reduce:0\] counted .* in \([0-9.]*\) s (.*$/\1/p' "$work/out" >> "$work/count$maps.times"
    [ -n "$baseline" ] || continue
    NO_COLOR=1 "$tw" launch --cluster "files=1,reduce=1,map=$maps" -- "$baseline" "$work/list" \
      > "$work/out" 2> "$work/err" || { cat "$work/err" >&2; exit 1; }
    total=$(sed -n 's/^\[reduce:0\] final total: \([0-9]*\)$/\1/p' "$work/out")
    if [ "$total" != "$wc_total" ]; then
      echo "wordcount_bench: the baseline counted '$total' words, wc -w $wc_total" >&2
      exit 1
    fi
    sed -n 's/^\[reduce:0\] counted .* in \([0-9.]*\) s (.*$/\1/p' "$work/out" >> "$work/base$maps.times"
  done
  t0=$(now_ns)
  NO_COLOR=1 "$tw" launch --cluster ps=1,worker=8 -- "$startup" > "$work/out" 2> "$work/err" \
    || { cat "$work/err" >&2; exit 1; }
  ready=$(sed -n 's/^\[worker:0\] all [0-9]* tasks ready at \([0-9]*\)$/\1/p' "$work/out")
  seconds "$t0" "$ready" >> "$work/startup.times"
done

mb=$(awk -v b="$bytes" 'BEGIN {printf "%.1f", b / 1e6}')
wc_s=$(median < "$work/wc.times")
rate() { awk -v b="$bytes" -v s="$1" 'BEGIN {printf "%.0f", b / 1e6 / s}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b / a}'; }

echo "Corpus: $files files, $bytes bytes ($mb MB), $expected words; $reps runs each, medians;"
echo "every word count equal to the wc -w total. $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| Run | Time | MB/s | vs. wc -w | Launch to exit (best) |"
echo "|---|---|---|---|---|"
echo "| \`LC_ALL=C wc -w\` (baseline, same run) | $wc_s s | $(rate "$wc_s") | 1.00× | – |"
for maps in 1 2; do
  c=$(median < "$work/count$maps.times")
  l="$(median < "$work/launch$maps.times") s ($(minimum < "$work/launch$maps.times") s)"
  echo "| word count, $maps map task$([ $maps = 1 ] || echo s) (counting phase) | $c s | $(rate "$c") | $(ratio "$c" "$wc_s")× | $l |"
done
if [ -n "$baseline" ]; then
  echo
  echo "| Counting phase | This build | Baseline ($baseline) | This / baseline |"
  echo "|---|---|---|---|"
  for maps in 1 2; do
    c=$(median < "$work/count$maps.times")
    b=$(median < "$work/base$maps.times")
    echo "| $maps map task$([ $maps = 1 ] || echo s) | $c s | $b s | $(ratio "$b" "$c")× |"
  done
fi
echo
echo "| Cluster start-up, 1 ps + 8 workers | Median | Best |"
echo "|---|---|---|"
echo "| launch to all tasks ready | $(median < "$work/startup.times") s | $(minimum < "$work/startup.times") s |"
