#!/usr/bin/env bash
# Installs exactly the Debian 12 packages tensorweave needs that are missing.
#
# Idempotent: it asks dpkg first and runs `apt-get update` / `apt-get install`
# only when something is missing, so a second run takes well under a second.
# Needs root (or sudo) only when it has something to install.
#
#   bash scripts/setup.sh          what building, testing and the demo need
#   bash scripts/setup.sh build    only what a release build needs (the Dockerfile's build
#                                  stage: no tests, no sanitizers, no data)
#   bash scripts/setup.sh bench    also what only the peer benchmarks need (PyTorch for
#                                  bench/mnist_torch.py); TW_SETUP_BENCH=1 does the same
#   bash scripts/setup.sh image    also what building and checking the Dockerfile's image
#                                  without a Docker engine needs (make image-check)
set -euo pipefail

with_bench=${TW_SETUP_BENCH:-0}
with_image=0
build_only=0
for arg in "$@"; do
  case "$arg" in
    bench) with_bench=1 ;;
    build) build_only=1 ;;
    image) with_image=1 ;;
    *) echo "usage: bash scripts/setup.sh [build | bench | image]" >&2; exit 2 ;;
  esac
done

# What `cmake -DTW_BUILD_TESTS=OFF -DTW_BUILD_BENCHMARKS=OFF` and `cmake --install` need.
build_packages=(
  build-essential cmake ninja-build pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libeigen3-dev nlohmann-json3-dev libcli11-dev libspdlog-dev
  zlib1g-dev libyaml-cpp-dev
  libfarmhash-dev  # src/ops/string_ops.cc: TensorFlow's string fingerprints (hash buckets)
  libleveldb-dev  # src/checkpoint/tf_bundle.cc: TensorFlow's checkpoint index (LevelDB's table format)
  libsnappy-dev  # src/checkpoint/table_blocks.cc: a table's Snappy blocks checked before LevelDB reads them
  libssl-dev  # src/rpc/grpc_tls.cc: a server checks its TLS certificate and key at start
  libcpp-httplib-dev  # src/rpc/metrics_endpoint.cc: the tasks' Prometheus endpoints
  libdnnl-dev ocl-icd-opencl-dev  # src/ops/onednn_conv.cc: oneDNN (its CMake config wants OpenCL's)
  python3 pybind11-dev python3-dev python3-numpy  # python/: the extension
  python3-absl  # python/: tf.app.flags and tf.app.run are absl's, as in TF 1.x
  python3-protobuf  # python/: tf.train.ServerDef and ClusterDef are protocol buffers
)
# Tests, sanitizers, formatting, and the data the examples, tests and demos read.
packages=(
  "${build_packages[@]}"
  clang-14 libclang-rt-14-dev clang-format
  libgtest-dev libgmock-dev libbenchmark-dev
  openssl  # tests/integration/tls_test.cc makes its throwaway certificates with it
  python3-pytest  # python/tests and tests/system; python3 also runs scripts/check_layers.py (make format-check)
  python3-setuptools python3-wheel python3-pip python3-venv  # pip install . (python/tests/test_pip_install.py)
  python3-yaml python3-ruamel.yaml  # tests/system/test_k8s_yaml.py: manifests read as YAML 1.1 and 1.2
  linux-doc-6.1  # the word-count corpus: examples, tests, make wordcount-demo, bench (24 MB of .rst.txt)
  dataset-fashion-mnist  # /usr/share/datasets/fashion-mnist: the examples' reader, its tests, training
  iproute2  # testing/python/tw_testing/simulated_hosts.py: network namespaces, veth pairs, tc (the tests' simulated hosts)
  iperf3  # bench/tcp_path_bench, bench/between_hosts_bench.py: the TCP path's ceiling
  iptables  # tests/system/test_simulated_hosts.py: a simulated host that opens only its task port
  prometheus  # tests/system/test_prometheus.py: a real Prometheus scrapes a tw launch cluster
  tmux  # tests/system/test_top.py: tw top in a real terminal
  python3-matplotlib  # tw plot draws the training curves (make demo ends with one)
)
if [ "$build_only" = 1 ]; then
  packages=("${build_packages[@]}")
fi
# Only for the peer baselines in bench/ (PyTorch pulls in a few hundred MB), not for building.
# libopenblas0-openmp becomes the system's libblas.so.3: without it Debian's torch calls the
# reference BLAS and its steps are ~8x slower, which would make the baseline a straw man.
bench_packages=(
  python3-torch libopenblas0-openmp  # bench/mnist_torch.py
)
if [ "$with_bench" = 1 ]; then
  packages+=("${bench_packages[@]}")
fi
# scripts/image_check.sh: podman builds the image with chroot isolation (no daemon), from
# base images debootstrap makes. Installed with their recommended packages (buildah's
# helpers, fuse-overlayfs, ...), as on the machine where the check was first run.
image_packages=(podman debootstrap)

# The packages of the list given that dpkg does not have installed.
missing_of() {
  local p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      echo "$p"
    fi
  done
}
mapfile -t missing < <(missing_of "${packages[@]}")
missing_image=()
if [ "$with_image" = 1 ]; then
  mapfile -t missing_image < <(missing_of "${image_packages[@]}")
fi

if [ ${#missing[@]} -eq 0 ] && [ ${#missing_image[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]} ${missing_image[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ${#missing_image[@]} -gt 0 ]; then
  $sudo apt-get install -y -qq "${missing_image[@]}" >/dev/null
fi
echo "setup: done"
