# tensorweave on Debian 12: `tw` and every program `cmake --install` installs (the examples),
# in a slim image that runs as any TFJob task.
#
#   docker build -t registry.example.com/tensorweave:0.1 .
#   docker build --build-arg TW_ARCH=x86-64-v3 -t ...    (only if every node has AVX2)
#   docker run --rm registry.example.com/tensorweave:0.1 tw --help
#
# See docs/kubernetes.md for running it on Kubernetes with the Kubeflow TFJob operator.

# The CPU the kernels are compiled for. x86-64-v2 (SSE4.2, 2009 on) runs on every x86-64
# node a cluster is likely to have. x86-64-v3 (AVX2, FMA) is faster but dies with SIGILL
# on an older node: exit code 132, which TFJob's ExitCode policy retries, so the pod would
# be recreated for ever on that node. Choose v3 only for node pools known to have AVX2.
ARG TW_ARCH=x86-64-v2

# --- build: only what a release build needs (scripts/setup.sh build), then CMake.
FROM debian:12 AS build
ARG TW_ARCH
WORKDIR /src
# Packages first, so editing the sources does not reinstall them.
COPY scripts/setup.sh scripts/setup.sh
RUN bash scripts/setup.sh build && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr/local \
        -DTW_BUILD_TESTS=OFF -DTW_BUILD_BENCHMARKS=OFF -DTW_ARCH="${TW_ARCH}" \
    && cmake --build /build -j "$(nproc)" \
    && DESTDIR=/staging cmake --install /build

# --- runtime: the shared libraries the installed programs link, tini, and the examples' data.
FROM debian:12-slim
# tini runs as PID 1: it forwards SIGTERM to the program and reaps children, so a program
# without a SIGTERM handler of its own still stops when Kubernetes stops the pod (PID 1
# ignores signals it has no handler for). dataset-fashion-mnist is what the examples' ps
# trainer reads (/usr/share/datasets/fashion-mnist).
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        libgrpc++1.51 libprotobuf32 libabsl20220623 libspdlog1.10 libyaml-cpp0.7 zlib1g \
        libcpp-httplib0.11 libssl3 libdnnl2 libleveldb1d libsnappy1v5 \
        tini dataset-fashion-mnist \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /staging/usr/local/ /usr/local/
RUN ldconfig && tw --help > /dev/null
# Tasks need no privileges; the TFJob operator's TF_CONFIG is all they read. A numeric
# user, so Kubernetes' runAsNonRoot can check it.
RUN useradd --uid 1000 --create-home --shell /usr/sbin/nologin tensorweave
USER 1000:1000
WORKDIR /home/tensorweave
# Every task listens on the port named tfjob-port in the TFJob (2222).
EXPOSE 2222
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["tw", "--help"]
