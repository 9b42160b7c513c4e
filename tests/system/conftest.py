"""Shared fixtures of the system tests: where the source and build trees are, the build's
`tw`, and a training cluster under `tw launch` to watch. No fixture imports tensorweave:
these tests drive the built programs as a user does."""

import contextlib
import os
import pathlib
import re
import signal
import subprocess
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("TW_BUILD_DIR", ROOT / "build"))
FASHION_MNIST = pathlib.Path("/usr/share/datasets/fashion-mnist")


@pytest.fixture
def tw_tool():
    tool = BUILD / "tools" / "tw"
    if not tool.exists():
        pytest.skip("the tw tool is not built (%s)" % tool)
    return str(tool)


@pytest.fixture
def fashion_mnist():
    """Skips a test that trains when Debian's dataset-fashion-mnist is missing."""
    if not FASHION_MNIST.is_dir():
        pytest.skip("Fashion-MNIST is missing (scripts/setup.sh installs dataset-fashion-mnist)")


@contextlib.contextmanager
def launched_training(tw_tool):
    """mnist_ps (1 ps + 2 workers) under tw launch, training long enough to watch; yields
    {"ps:0": "127.0.0.1:PORT", ...}, the tasks' metrics endpoints tw launch printed, and
    stops the cluster afterwards. Skips the test without Fashion-MNIST."""
    if not FASHION_MNIST.is_dir():
        pytest.skip("Fashion-MNIST is missing (scripts/setup.sh installs dataset-fashion-mnist)")
    launch = subprocess.Popen(
        [tw_tool, "launch", "--cluster", "ps=1,worker=2", "--color", "never", "--",
         str(BUILD / "examples" / "mnist_ps"), "--max_steps=10000000", "--log_every=1000000"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={k: v for k, v in os.environ.items() if k not in ("TF_CONFIG", "TW_METRICS_PORT")})
    try:
        endpoints = {}
        deadline = time.monotonic() + 30
        while not endpoints and time.monotonic() < deadline:
            line = launch.stderr.readline()
            if line.startswith("tw launch: metrics: "):
                endpoints = dict(re.findall(r"(\w+:\d+) http://([\d.:]+)/metrics", line))
        assert set(endpoints) == {"ps:0", "worker:0", "worker:1"}, endpoints
        yield endpoints
    finally:
        launch.send_signal(signal.SIGTERM)
        launch.wait(timeout=60)
