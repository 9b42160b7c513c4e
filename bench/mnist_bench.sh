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
# In the same run, the tensorweave trainer (examples/mnist_ps from BUILD_DIR) trains the same
# model with the same batch size, learning rate and number of examples: once as a cluster
# under `tw launch` (1 ps + 2 workers, asynchronous; with same-host shared memory, and with
# it off so tensors cross in gRPC messages) and once as a single process (no cluster: every
# op on its own task). Time to the target counts training time only (the
# chief's evaluations are excluded), as in mnist_torch.py.
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

out=$(mktemp)
trap 'rm -f "$out"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
"$python" "$here/mnist_torch.py" "$@" | tee "$out" >&2
json=$(tail -n 1 "$out")

field() { "$python" -c 'import json, sys; v = json.loads(sys.argv[1])[sys.argv[2]]; print("–" if v is None else v)' "$json" "$1"; }

epochs=$(field epochs)
batch=$(field batch_size)
lr=$(field learning_rate)
steps=$((epochs * 60000 / batch))

# Our trainer: "trained N global steps in T s: X examples/s" and "eval at step S: test
# accuracy A after T s of training" lines from the chief.
run_ours() {  # label, then the command
  local label=$1 log
  shift
  log=$(mktemp)
  "$@" --max_steps="$steps" --batch_size="$batch" --learning_rate="$lr" --eval_every=500 \
    --log_every=100000 > "$log" 2>&1 || { cat "$log" >&2; echo "mnist_bench: $label failed" >&2; exit 1; }
  local rate secs accuracy first
  rate=$(sed -n 's/.*trained [0-9]* global steps in \([0-9.]*\) s: \([0-9]*\) examples\/s.*/\2/p' "$log")
  secs=$(sed -n 's/.*trained [0-9]* global steps in \([0-9.]*\) s: .*/\1/p' "$log")
  accuracy=$(sed -n 's/.*test accuracy: \([0-9.]*\)$/\1/p' "$log")
  first=$(sed -n 's/.*eval at step \([0-9]*\): test accuracy \([0-9.]*\) after \([0-9.]*\) s.*/\1 \2 \3/p' "$log" \
    | awk -v t="$(field target_accuracy)" '$2 >= t {print $3 " s | " $1; exit}')
  rm -f "$log"
  echo "| $label | $rate | ${first:-not reached | –} | $secs s | $accuracy |"
  ours_rate=$rate
}

echo "$(nproc) cores, load average $load_before before the run; $(field torch_version)," \
  "$(field threads) threads, BLAS $(field blas); batch $batch, lr $lr, $epochs epochs ($steps steps)"
echo
echo "| Trainer | examples/s (steady) | time to $(field target_accuracy) test accuracy | steps | training time, all steps | final accuracy |"
echo "|---|---|---|---|---|---|"
echo "| PyTorch (baseline, same run) | $(field examples_per_sec) | $(field seconds_to_target) s | $(field steps_to_target) | $(field train_seconds) s | $(field final_test_accuracy) |"
run_ours "tensorweave, 1 process" env -u TF_CONFIG "$build/examples/mnist_ps"
run_ours "tensorweave, 1 ps + 2 workers, gRPC only (TW_SHARED_MEMORY=0)" env TW_SHARED_MEMORY=0 \
  "$build/tools/tw" launch --cluster ps=1,worker=2 -- "$build/examples/mnist_ps"
run_ours "tensorweave, 1 ps + 2 workers (tw launch)" "$build/tools/tw" launch --cluster ps=1,worker=2 -- "$build/examples/mnist_ps"
awk -v a="$ours_rate" -v b="$(field examples_per_sec)" \
  'BEGIN {printf "\ndistributed / PyTorch examples/s: %.2fx (goal >= 1.0x)\n", a / b}'
