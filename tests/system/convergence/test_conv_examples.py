"""The deep-MNIST conv net trained as its users train it: examples/mnist_ps --model=conv
(C++) and examples/python/trainer.py --model=conv (Python, tf.layers), each as 1 ps + 2
workers under `tw launch` with replica_device_setter and MonitoredTrainingSession, for eight
epochs of Fashion-MNIST with the examples' defaults (Adam at 0.002, warmed up over 300
steps, halved every 1,200). Issue 30 asks 0.91 of them. Minutes of training each, so ctest
runs this file as its own test (conv_examples_convergence), beside the others, with a
timeout of its own."""

import os
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT

PYTHON_TRAINER = ROOT / "examples" / "python" / "trainer.py"
TARGET = 0.91
# Global steps of 100 examples (all workers together; 600 are an epoch). Measured 2026-11-29
# on 2 cores (docs/performance.md): the C++ example passes 0.91 after six epochs (0.9148 at
# 3,600 steps); eight leave a margin for the asynchronous workers' run-to-run spread.
STEPS = 4800


def environment():
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CONFIG", "TW_METRICS_PORT")}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(BUILD / "python")] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def final_accuracy(stdout):
    lines = [l for l in stdout.splitlines() if l.startswith("[worker:0] test accuracy:")]
    assert lines, stdout
    return float(lines[-1].split()[-1])


def launch(tw_tool, program, tmp_path):
    out = subprocess.run(
        [tw_tool, "launch", "--cluster", "ps=1,worker=2", "--color", "never", "--"] + program +
        ["--max_steps=%d" % STEPS, "--batch_size=100", "--checkpoint_dir=%s" % tmp_path],
        env=environment(), capture_output=True, text=True, timeout=1400)
    assert out.returncode == 0, out.stdout + out.stderr
    return out


def test_cpp_conv_trainer_converges(tw_tool, fashion_mnist, tmp_path):
    out = launch(tw_tool, [str(BUILD / "examples" / "mnist_ps"), "--model=conv", "--seed=1",
                           "--log_every=1200"], tmp_path)
    assert final_accuracy(out.stdout) >= TARGET, out.stdout + out.stderr


def test_python_conv_trainer_converges(tw_tool, fashion_mnist, tmp_path):
    out = launch(tw_tool, [sys.executable, str(PYTHON_TRAINER), "--model=conv", "--seed=1",
                           "--log_every=1200"], tmp_path)
    assert final_accuracy(out.stdout) >= TARGET, out.stdout + out.stderr
