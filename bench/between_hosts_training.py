#!/usr/bin/python3
"""Parameter-server training between hosts: examples/mnist_ps (1 ps + 2 workers) with
every task on its own simulated host (tw_testing.simulated_hosts, links shaped with tc tbf,
default 10gbit) against the same cluster on loopback TCP (127.0.0.1, shared memory off), in
turns, in one run.

    sudo PYTHONPATH=testing/python bench/between_hosts_training.py [--build build]
        [--rounds 3] [--link-rate 10gbit] [-- MNIST_PS FLAGS]

Each run trains --max_steps global steps (default 3000, batch 100) and the chief reports
its examples/s over the training alone (its evaluations excluded). Prints, per round, both
throughputs and their ratio, then the medians, as a Markdown table. Needs root and
Debian's dataset-fashion-mnist; removes the hosts it made, also when interrupted.
"""

import argparse
import json
import os
import pathlib
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
try:
    from tw_testing import simulated_hosts
except ImportError:
    sys.exit("between_hosts_training: needs testing/python on PYTHONPATH (tw_testing)")

PORT = 2222
THROUGHPUT = re.compile(r"trained \d+ global steps in [\d.]+ s: (\d+) examples/s")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def train(commands, tf_configs, env, log_dir, timeout=900):
    """Runs the three tasks (ps, worker 0 = chief, worker 1); returns the chief's examples/s."""
    logs = [open(pathlib.Path(log_dir, "task%d.log" % i), "w") for i in range(len(commands))]
    processes = [subprocess.Popen(argv, env=dict(env, TF_CONFIG=config), stdout=log,
                                  stderr=subprocess.STDOUT)
                 for argv, config, log in zip(commands, tf_configs, logs)]
    try:
        codes = [p.wait(timeout=timeout) for p in processes[1:]] + [processes[0].wait(timeout=60)]
    finally:
        for p in processes:
            p.kill()
            p.wait()
        for log in logs:
            log.close()
    chief = pathlib.Path(log_dir, "task1.log").read_text()
    found = THROUGHPUT.search(chief)
    if codes != [0, 0, 0] or not found:
        raise RuntimeError("training failed (exit codes %s):\n%s" % (codes, chief[-2000:]))
    return float(found.group(1))


def tf_configs(addresses):
    cluster = {"ps": addresses[:1], "worker": addresses[1:]}
    tasks = [("ps", 0), ("worker", 0), ("worker", 1)]
    return [json.dumps({"cluster": cluster, "task": {"type": job, "index": index}})
            for job, index in tasks]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--link-rate", default="10gbit",
                        help="tc rate of every link, or 'none' for unshaped veth links")
    parser.add_argument("mnist_flags", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    why_not = simulated_hosts.available()
    if why_not:
        print("between_hosts_training: " + why_not, file=sys.stderr)
        return 1
    mnist_ps = pathlib.Path(args.build).resolve() / "examples" / "mnist_ps"
    if not mnist_ps.exists():
        print("between_hosts_training: %s is not built" % mnist_ps, file=sys.stderr)
        return 1
    flags = args.mnist_flags[1:] if args.mnist_flags[:1] == ["--"] else args.mnist_flags
    if not any(f.startswith("--max_steps") for f in flags):
        flags = ["--max_steps=3000"] + flags
    flags = ["--seed=1", "--log_every=1000"] + flags
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    env = dict(os.environ, TW_SHARED_MEMORY="0")
    env.pop("TF_CONFIG", None)
    rows = []
    with tempfile.TemporaryDirectory() as work, \
            simulated_hosts.SimulatedHosts(
                3, link_rate=None if args.link_rate == "none" else args.link_rate) as hosts:
        for r in range(args.rounds):
            loopback = ["127.0.0.1:%d" % free_port() for _ in range(3)]
            local = train([[str(mnist_ps)] + flags] * 3, tf_configs(loopback), env, work)
            addresses = ["%s:%d" % (hosts.address(h), PORT) for h in range(3)]
            between = train([hosts.command(h, [str(mnist_ps)] + flags) for h in range(3)],
                            tf_configs(addresses), env, work)
            rows.append((local, between))
            print("round %d: loopback %.0f, between hosts %.0f examples/s (%.3fx)" %
                  (r + 1, local, between, between / local), file=sys.stderr)
    print("| mnist_ps, 1 ps + 2 workers, %s | examples/s (median of %d) |" %
          (" ".join(flags), args.rounds))
    print("|---|---|")
    print("| loopback TCP (127.0.0.1, shared memory off) | %.0f |" %
          statistics.median(r[0] for r in rows))
    print("| every task on its own simulated host, %s links | %.0f |" %
          (args.link_rate, statistics.median(r[1] for r in rows)))
    print("| ratio (median of the rounds' ratios) | %.3fx |" %
          statistics.median(r[1] / r[0] for r in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
