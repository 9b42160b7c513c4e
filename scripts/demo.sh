#!/usr/bin/env bash
# The demo: how every task of a Kubeflow TFJob (chief=1, worker=2, ps=1) resolves its role
# from the TF_CONFIG the operator injects, using `tw cluster` from build dir $1.
set -euo pipefail
tw="${1:-build}/tools/tw"
cluster='{"chief":["mnist-chief-0.kubeflow.svc:2222"],"ps":["mnist-ps-0.kubeflow.svc:2222"],"worker":["mnist-worker-0.kubeflow.svc:2222","mnist-worker-1.kubeflow.svc:2222"]}'

echo "A TFJob with chief=1, worker=2, ps=1. The operator gives each pod this TF_CONFIG:"
echo
for task in chief:0 worker:0 worker:1 ps:0; do
  type=${task%%:*}; index=${task##*:}
  tf_config="{\"cluster\":$cluster,\"task\":{\"type\":\"$type\",\"index\":$index},\"environment\":\"cloud\"}"
  if [ "$task" = chief:0 ]; then
    echo "  TF_CONFIG='$tf_config'"
    echo
    echo "and \`tw cluster\` in the chief's pod prints:"
    TF_CONFIG="$tf_config" "$tw" cluster | sed 's/^/  /'
    echo
    echo "Every task, one line each (is_chief, target, bind address, the tasks it talks to):"
  fi
  TF_CONFIG="$tf_config" "$tw" cluster | tr -d '\n ' | sed -E \
    's/.*"bind_address":"([^"]*)".*"device_filters":\[([^]]*)\].*"is_chief":([a-z]*).*"target":"([^"]*)".*/\3 \4 \1 [\2]/' \
    | awk -v t="$task" '{printf "  %-9s is_chief=%-5s target=%-42s bind=%-13s talks to %s\n", t, $1, $2, $3, $4}'
done
echo
echo "Bad input is one clear line and exit code 1:"
TF_CONFIG='{"cluster":{"worker":["w-0:2222"]},"task":{"type":"worker","index":3}}' "$tw" cluster 2>&1 | sed 's/^/  /' || true
