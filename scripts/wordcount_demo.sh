#!/usr/bin/env bash
# The word-count demo (`make wordcount-demo`): the seeds' MapReduce word count as a real cluster on this machine.
# `tw launch` starts the tasks files:0, reduce:0, map:0 and map:1 of examples/wordcount,
# each learning its role from TF_CONFIG as in a Kubeflow TFJob; they count the words of the
# Linux kernel documentation (Debian's linux-doc-6.1, installed by scripts/setup.sh), and
# the total is checked against `LC_ALL=C wc -w` on the same files.
#
#   bash scripts/wordcount_demo.sh [BUILD_DIR]    (make wordcount-demo builds first, then runs this)
set -euo pipefail
build="${1:-build}"
tw="$build/tools/tw"
wordcount="$build/examples/wordcount"
corpus=/usr/share/doc/linux-doc-6.1

bash "$(dirname "$0")/setup.sh"  # installs linux-doc-6.1 if it is missing
for program in "$tw" "$wordcount"; do
  [ -x "$program" ] || { echo "demo: $program is not built (run make wordcount-demo)" >&2; exit 1; }
done

list="$build/wordcount-corpus.list"
find "$corpus" -type f -name '*.rst.txt' | LC_ALL=C sort > "$list"
files=$(wc -l < "$list")
bytes=$(tr '\n' '\0' < "$list" | wc -c --files0-from=- | tail -n 1 | awk '{print $1}')
echo "Corpus: $files files of $corpus ($((bytes / 1000000)) MB), listed in $list"
echo
echo "\$ tw launch --cluster files=1,reduce=1,map=2 --success reduce:0 --restart exit-code -- $wordcount $list"
out="$build/wordcount-demo.out"
start=$(date +%s%N)
status=0
"$tw" launch --cluster files=1,reduce=1,map=2 --success reduce:0 --restart exit-code -- \
  "$wordcount" "$list" | tee "$out" || status=$?
end=$(date +%s%N)
if [ "$status" -ne 0 ]; then
  echo "demo: the word count failed (exit code $status)" >&2
  exit "$status"
fi

total=$(sed -n 's/^\[reduce:0\] final total: \([0-9]*\)$/\1/p' "$out")
wc_total=$(tr '\n' '\0' < "$list" | LC_ALL=C wc -w --files0-from=- | tail -n 1 | awk '{print $1}')
echo
echo "word count total:      $total"
echo "LC_ALL=C wc -w total:  $wc_total"
if [ "$total" = "$wc_total" ]; then
  echo "match:                 yes"
else
  echo "match:                 NO"
fi
awk -v a="$start" -v b="$end" 'BEGIN {printf "time:                  %.2f s (tw launch, start to exit of every task)\n", (b - a) / 1e9}'
[ "$total" = "$wc_total" ]
