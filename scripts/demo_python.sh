#!/usr/bin/env bash
# The Python demo (`make demo-python`): the seeds' parameter-server trainer
# (examples/python/trainer.py, `import tensorweave.compat.v1 as tf`) as a real cluster on
# this machine. `tw launch` starts ps:0, worker:0 (the chief) and worker:1, each learning
# its role from TF_CONFIG; the workers train an MLP on Fashion-MNIST asynchronously through
# the ps task with Adagrad under a MonitoredTrainingSession, the chief checkpoints,
# evaluates the 10,000 test images and stops the cluster; the demo checks that the test
# accuracy reaches 0.88.
#
#   bash scripts/demo_python.sh [BUILD_DIR] [trainer.py flags...]   (make demo-python builds first)
set -euo pipefail
source "$(dirname "$0")/demo_common.sh"
build="${1:-build}"
shift || true
tw="$build/tools/tw"
here=$(cd "$(dirname "$0")" && pwd)
trainer="$here/../examples/python/trainer.py"

bash "$here/setup.sh"  # installs dataset-fashion-mnist and python3-numpy if missing
[ -x "$tw" ] || { echo "demo-python: $tw is not built (run make demo-python)" >&2; exit 1; }
[ -d "$build/python/tensorweave" ] \
  || { echo "demo-python: $build/python has no tensorweave package (run make demo-python)" >&2; exit 1; }

checkpoints=$(cd "$build" && pwd)/python-demo-checkpoints
rm -rf "$checkpoints"
flags=(--max_steps=12000 --batch_size=100 --learning_rate=0.1 --log_every=1000
       --checkpoint_dir="$checkpoints" "$@")
echo "\$ tw launch --cluster ps=1,worker=2 -- python3 $trainer ${flags[*]}"
run_training_demo demo-python "$build/python-demo.out" "$checkpoints" \
  env PYTHONPATH="$build/python" \
  "$tw" launch --cluster ps=1,worker=2 -- /usr/bin/python3 "$trainer" "${flags[@]}"
plot_demo_curves "$tw" "$checkpoints" "$build/python-demo-curves.png"
