# Sourced by the training demos (demo.sh, demo_python.sh).
#
# run_training_demo NAME OUT CHECKPOINTS COMMAND...: runs COMMAND (a `tw launch` of the
# trainer), shows its output without the info logs and keeps it in OUT, then reports the
# chief's test accuracy, the checkpoints kept in CHECKPOINTS and the time from launch to
# the exit of every task. Fails with the command's exit code, or unless the accuracy
# reaches 0.88.
run_training_demo() {
  local name=$1 out=$2 checkpoints=$3
  shift 3
  local start end accuracy status=0
  start=$(date +%s%N)
  "$@" | grep -v '\[info\]\|INFO:tensorflow' | tee "$out" || status=$?
  end=$(date +%s%N)
  if [ "$status" -ne 0 ]; then
    echo "$name: training failed (exit code $status)" >&2
    return "$status"
  fi
  accuracy=$(sed -n 's/^\[worker:0\] test accuracy: \([0-9.]*\)$/\1/p' "$out")
  echo
  echo "test accuracy:  ${accuracy:-none}  (goal: 0.88)"
  echo "checkpoints:    $(ls "$checkpoints" | grep -c '\.index$') kept in $checkpoints"
  awk -v a="$start" -v b="$end" \
    'BEGIN {printf "time:           %.1f s (tw launch, start to exit of every task)\n", (b - a) / 1e9}'
  [ -n "$accuracy" ] && awk -v a="$accuracy" 'BEGIN {exit !(a >= 0.88)}'
}

# Draws the training curves the chief wrote into the checkpoint directory and names the
# picture: plot_demo_curves TW CHECKPOINT_DIR PNG.
plot_demo_curves() {
  local tw=$1 checkpoints=$2 png=$3
  "$tw" plot "$checkpoints" --out "$png" > /dev/null
  echo "curves:         $png (loss, accuracy, steps/s, test accuracy; tw plot)"
}
