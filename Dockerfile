# tensorweave on Debian 12: `tw` and every program `cmake --install` installs (the examples),
# in a slim image that runs as any TFJob task.
#
#   docker build -t registry.example.com/tensorweave:0.1 .
#   docker run --rm registry.example.com/tensorweave:0.1 tw --help
#
# See docs/kubernetes.md for running it on Kubernetes with the Kubeflow TFJob operator.

# --- build: the same packages and CMake build as a developer machine (scripts/setup.sh).
FROM debian:12 AS build
WORKDIR /src
# Packages first, so editing the sources does not reinstall them.
COPY scripts/setup.sh scripts/setup.sh
RUN bash scripts/setup.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr/local \
        -DTW_BUILD_TESTS=OFF -DTW_BUILD_BENCHMARKS=OFF -DTW_ARCH=x86-64-v3 \
    && cmake --build /build -j "$(nproc)" \
    && DESTDIR=/staging cmake --install /build

# --- runtime: the shared libraries the installed programs link, and nothing to build with.
FROM debian:12-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        libgrpc++1.51 libprotobuf32 libabsl20220623 libspdlog1.10 libyaml-cpp0.7 zlib1g \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /staging/usr/local/ /usr/local/
RUN ldconfig && tw --help > /dev/null
# Tasks need no privileges; the TFJob operator's TF_CONFIG is all they read.
RUN useradd --uid 1000 --create-home --shell /usr/sbin/nologin tensorweave
USER 1000:1000
WORKDIR /home/tensorweave
# Every task listens on the port named tfjob-port in the TFJob (2222).
EXPOSE 2222
CMD ["tw", "--help"]
