#!/usr/bin/env bash
# The demo (`make demo`): parameter-server training as a real cluster on this machine.
# `tw launch` starts ps:0, worker:0 (the chief) and worker:1 of examples/mnist_ps, each
# learning its role from TF_CONFIG as in a Kubeflow TFJob. The workers train an MLP on
# Fashion-MNIST (Debian's dataset-fashion-mnist, installed by scripts/setup.sh)
# asynchronously through the ps task, the chief checkpoints, evaluates on the 10,000 test
# images and stops the cluster; the demo checks that the test accuracy reaches 0.88, and
# ends by drawing the training curves (tw plot) and naming the picture.
#
#   bash scripts/demo.sh [BUILD_DIR] [mnist_ps flags...]   (make demo builds first)
set -euo pipefail
source "$(dirname "$0")/demo_common.sh"
build="${1:-build}"
shift || true
tw="$build/tools/tw"
trainer="$build/examples/mnist_ps"

bash "$(dirname "$0")/setup.sh"  # installs dataset-fashion-mnist if it is missing
for program in "$tw" "$trainer"; do
  [ -x "$program" ] || { echo "demo: $program is not built (run make demo)" >&2; exit 1; }
done

checkpoints="$build/mnist-demo-checkpoints"
rm -rf "$checkpoints"
flags=(--max_steps=12000 --batch_size=100 --learning_rate=0.1 --log_every=1000 --eval_every=2000
       --checkpoint_dir="$checkpoints" "$@")
echo "\$ tw launch --cluster ps=1,worker=2 -- $trainer ${flags[*]}"
run_training_demo demo "$build/mnist-demo.out" "$checkpoints" \
  "$tw" launch --cluster ps=1,worker=2 -- "$trainer" "${flags[@]}"
plot_demo_curves "$tw" "$checkpoints" "$build/mnist-demo-curves.png"
