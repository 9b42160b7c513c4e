"""Shared fixtures: a fresh default graph per test, and the build's tools."""

import os
import pathlib
import socket
import subprocess
import sys

import pytest

import tensorweave.compat.v1 as tf
from tensorweave.training import server_lib

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("TW_BUILD_DIR", ROOT / "build"))


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


@pytest.fixture(autouse=True)
def servers_stop_with_their_test():
    """A started server serves until the process ends, as in TF; a test's servers stop when
    the test does, so that tests do not pile up servers."""
    before = set(server_lib._running)
    yield
    for server in set(server_lib._running) - before:
        server.stop()
        server_lib._running.discard(server)


@pytest.fixture
def tw_tool():
    tool = BUILD / "tools" / "tw"
    if not tool.exists():
        pytest.skip("the tw tool is not built (%s)" % tool)
    return str(tool)


def python_env():
    """The environment for a child Python that imports this build's package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(BUILD / "python")
    env.pop("TF_CONFIG", None)
    env.pop("TW_ALLOWED_DIRECTORIES", None)  # programs need none (the chief writes checkpoints)
    return env


def run_python(args, timeout=60, **kwargs):
    return subprocess.run([sys.executable] + args, env=python_env(), capture_output=True,
                          text=True, timeout=timeout, **kwargs)


@pytest.fixture
def fashion_mnist():
    """Skips a test that trains when Debian's dataset-fashion-mnist is missing."""
    if not pathlib.Path("/usr/share/datasets/fashion-mnist").is_dir():
        pytest.skip("Fashion-MNIST is missing (scripts/setup.sh installs dataset-fashion-mnist)")


def free_address():
    """"127.0.0.1:<port>" on a port that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


def in_process_cluster(num_ps):
    """Servers of `num_ps` ps tasks and a worker in this process, on loopback; the last is
    the worker's. None of them allows any directory."""
    spec = {"ps": [free_address() for _ in range(num_ps)], "worker": [free_address()]}
    servers = [tf.train.Server(spec, job_name="ps", task_index=i, _bind_host="127.0.0.1")
               for i in range(num_ps)]
    servers.append(tf.train.Server(spec, job_name="worker", task_index=0,
                                   _bind_host="127.0.0.1"))
    return servers
