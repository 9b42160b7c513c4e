#!/usr/bin/env bash
# Installs tensorweave from build dir $1 into a scratch prefix, then configures, builds and
# runs tests/consumer against it with find_package(tensorweave), as another project would.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cmake --install "$build" --prefix "$scratch/prefix" > "$scratch/install.log"
cmake -S "$root/tests/consumer" -B "$scratch/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" > "$scratch/configure.log" \
  || { cat "$scratch/configure.log"; exit 1; }
cmake --build "$scratch/consumer" > "$scratch/build.log" || { cat "$scratch/build.log"; exit 1; }
"$scratch/consumer/consumer"
TF_CONFIG='{"cluster":{"worker":["w-0:2222","w-1:2222"]},"task":{"type":"worker","index":1}}' \
  "$scratch/prefix/bin/tw" cluster | grep -q '"target": "grpc://w-1:2222"'
# The Python package, from the prefix alone (the interpreter the README names).
PYTHONPATH="$scratch/prefix/lib/python3/dist-packages" /usr/bin/python3 -c '
import tensorweave.compat.v1 as tf
server = tf.train.Server.create_local_server()
assert tf.Session(server.target).run(tf.constant("installed")) == b"installed"
' 2>/dev/null
# `tw plot` finds its drawing script in the prefix (libexec/tensorweave/plot_curves.py) and
# draws events the installed package wrote.
PYTHONPATH="$scratch/prefix/lib/python3/dist-packages" /usr/bin/python3 -c '
import sys
import tensorweave.compat.v1 as tf
with tf.summary.FileWriter(sys.argv[1]) as writer:
    for step in range(3):
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=1.0 / (1 + step))]), step)
' "$scratch/run" 2>/dev/null
"$scratch/prefix/bin/tw" plot "$scratch/run" --out "$scratch/curves.png" > /dev/null
test -s "$scratch/curves.png"
echo "install-check: ok (find_package(tensorweave), tensorweave::tensorweave, bin/tw (with tw plot) and the Python package work from $(basename "$scratch")/prefix)"
