#!/usr/bin/env bash
# Fashion-MNIST training (issue 6, section 8): the peer baseline, PyTorch on the same model,
# data and optimizer (bench/mnist_torch.py), printed as a Markdown table for
# docs/performance.md.
#
#   bench/mnist_bench.sh [BUILD_DIR] [-- extra mnist_torch.py flags]     (default: build)
#
# Installs the bench-only packages first (bash scripts/setup.sh bench: python3-torch and
# libopenblas0-openmp; TW_BENCH_SKIP_SETUP=1 skips that). Runs Debian's /usr/bin/python3 (override with PYTHON=...), since
# python3-torch is installed for it and a pyenv or venv python3 on PATH would not find it.
#
# In the same run, the tensorweave trainers (examples/mnist_ps from BUILD_DIR, and the seeds'
# Python trainer examples/python/trainer.py over BUILD_DIR's Python package) train the same
# model with the same batch size, learning rate and number of examples: once as a cluster
# under `tw launch` (1 ps + 2 workers, asynchronous; with same-host shared memory, and with
# it off so tensors cross in gRPC messages) and once as a single process (no cluster: every
# op on its own task). Time to the target counts training time only (the
# chief's evaluations are excluded), as in mnist_torch.py.
#
# This VM's speed drifts by tens of percent within a minute, so the trainers run in turns:
# TW_BENCH_ROUNDS rounds (default 3) of PyTorch and then ours. Each trainer's row is its
# median round; the ratio is the median of the rounds' ratios (each within one round).
set -euo pipefail

build=${1:-build}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
python=${PYTHON:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)

if [ "${TW_BENCH_SKIP_SETUP:-0}" != 1 ]; then  # 1: use what is installed, install nothing
  bash "$here/../scripts/setup.sh" bench
fi
"$python" -c 'import torch, numpy' \
  || { echo "mnist_bench: $python cannot import torch and numpy" >&2; exit 1; }

rounds=${TW_BENCH_ROUNDS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

json=
field() { "$python" -c 'import json, sys; v = json.loads(sys.argv[1])[sys.argv[2]]; print("–" if v is None else v)' "$json" "$1"; }

# Our trainer: "trained N global steps in T s: X examples/s" and "eval at step S: test
# accuracy A after T s of training" lines from the chief. Appends "rate<TAB>row" to the
# trainer's file in $work and sets ours_rate.
run_ours() {  # file, label, then the command
  local file=$1 label=$2 log
  shift 2
  log=$work/log
  "$@" --max_steps="$steps" --batch_size="$batch" --learning_rate="$lr" --eval_every=500 \
    --log_every=100000 > "$log" 2>&1 || { cat "$log" >&2; echo "mnist_bench: $label failed" >&2; exit 1; }
  local rate secs accuracy first
  rate=$(sed -n 's/.*trained [0-9]* global steps in \([0-9.]*\) s: \([0-9]*\) examples\/s.*/\2/p' "$log")
  secs=$(sed -n 's/.*trained [0-9]* global steps in \([0-9.]*\) s: .*/\1/p' "$log")
  accuracy=$(sed -n 's/.*test accuracy: \([0-9.]*\)$/\1/p' "$log")
  first=$(sed -n 's/.*eval at step \([0-9]*\): test accuracy \([0-9.]*\) after \([0-9.]*\) s.*/\1 \2 \3/p' "$log" \
    | awk -v t="$(field target_accuracy)" '$2 >= t {print $3 " s | " $1; exit}')
  printf '%s\t| %s | %s | %s | %s s | %s |\n' "$rate" "$label" "$rate" "${first:-not reached | –}" \
    "$secs" "$accuracy" >> "$work/$file"
  ours_rate=$rate
}

ratios=()
python_ratios=()
python_torch_ratios=()
for round in $(seq "$rounds"); do
  "$python" "$here/mnist_torch.py" "$@" | tee "$work/torch" >&2
  json=$(tail -n 1 "$work/torch")
  epochs=$(field epochs)
  batch=$(field batch_size)
  lr=$(field learning_rate)
  steps=$((epochs * 60000 / batch))
  torch_rate=$(field examples_per_sec)
  printf '%s\t| PyTorch (baseline, same run) | %s | %s s | %s | %s s | %s |\n' "$torch_rate" \
    "$torch_rate" "$(field seconds_to_target)" "$(field steps_to_target)" \
    "$(field train_seconds)" "$(field final_test_accuracy)" >> "$work/0-torch"
  run_ours 1-one "tensorweave, 1 process" env -u TF_CONFIG "$build/examples/mnist_ps"
  run_ours 2-grpc "tensorweave, 1 ps + 2 workers, gRPC only (TW_SHARED_MEMORY=0)" \
    env TW_SHARED_MEMORY=0 "$build/tools/tw" launch --cluster ps=1,worker=2 -- "$build/examples/mnist_ps"
  run_ours 3-cluster "tensorweave, 1 ps + 2 workers (tw launch)" \
    "$build/tools/tw" launch --cluster ps=1,worker=2 -- "$build/examples/mnist_ps"
  cpp_rate=$ours_rate
  ratios+=("$(awk -v a="$ours_rate" -v b="$torch_rate" 'BEGIN {printf "%.2f", a / b}')")
  rm -rf "$work/ckpt"
  run_ours 4-python "tensorweave from Python (examples/python/trainer.py), 1 ps + 2 workers" \
    env TW_ALLOWED_DIRECTORIES="$work/ckpt" PYTHONPATH="$build/python" "$build/tools/tw" launch \
    --cluster ps=1,worker=2 -- "$python" "$here/../examples/python/trainer.py" \
    --checkpoint_dir="$work/ckpt" --save_every=1000000000
  python_ratios+=("$(awk -v a="$ours_rate" -v b="$cpp_rate" 'BEGIN {printf "%.2f", a / b}')")
  python_torch_ratios+=("$(awk -v a="$ours_rate" -v b="$torch_rate" 'BEGIN {printf "%.2f", a / b}')")
  echo "mnist_bench: round $round: distributed / PyTorch ${ratios[-1]}x, Python / C++" \
    "${python_ratios[-1]}x, Python / PyTorch ${python_torch_ratios[-1]}x" >&2
done

median() { sort -g | awk '{v[NR] = $0} END {print v[int((NR + 1) / 2)]}'; }

echo "$(nproc) cores, load average $load_before before the run; $(field torch_version)," \
  "$(field threads) threads, BLAS $(field blas); batch $batch, lr $lr, $epochs epochs ($steps steps);" \
  "$rounds rounds in turns, each trainer's median round"
echo
echo "| Trainer | examples/s (steady) | time to $(field target_accuracy) test accuracy | steps | training time, all steps | final accuracy |"
echo "|---|---|---|---|---|---|"
for file in 0-torch 1-one 2-grpc 3-cluster 4-python; do
  sort -g "$work/$file" | awk '{v[NR] = $0} END {print v[int((NR + 1) / 2)]}' | cut -f2-
done
echo
echo "distributed / PyTorch examples/s by round: ${ratios[*]}"
printf '%s\n' "${ratios[@]}" | median | awk '{printf "median: %.2fx (goal >= 1.0x)\n", $1}'
echo "Python trainer / C++ trainer (both 1 ps + 2 workers) by round: ${python_ratios[*]}"
printf '%s\n' "${python_ratios[@]}" | median | awk '{printf "median: %.2fx (goal >= 0.9x)\n", $1}'
echo "Python trainer / PyTorch by round: ${python_torch_ratios[*]}"
printf '%s\n' "${python_torch_ratios[@]}" | median | awk '{printf "median: %.2fx (goal >= 1.0x)\n", $1}'
