#!/usr/bin/python3
"""ClusterCoordinator (issue 32) against between-graph MonitoredTrainingSession training.

1. Training, in turns, --rounds times: the Fashion-MNIST MLP as 1 ps + 2 workers under
   `tw launch`, trained by one client with a ClusterCoordinator
   (examples/python/coordinator_trainer.py, chief=1) and by the workers themselves through
   MonitoredTrainingSession (examples/python/trainer.py); both feed batches from memory
   (the coordinator's chief feeds them; MTS workers feed their own), or with
   --train_files both read TFRecord files on the workers. The chief's "examples/s (all
   workers)", after the first step. Goal: coordinator at least 0.95x MTS.
2. The coordinator's own cost per scheduled step, in this process with a ps and one worker
   server on loopback, a step that adds one to a ps variable:
     schedule     the program's side: schedule() of a traced function (Python and C++
                  queueing), per call;
     overhead     per step, scheduled through the coordinator minus the same step run by
                  a Session on the same worker in a loop (both one step at a time).
   Goal: under 50 us each.

  /usr/bin/python3 bench/coordinator_bench.py [--rounds 2] [--steps 6000] [--build build]
      [--train_files '/tmp/records/train-*'] [--skip_training]
"""
import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def trainer_rounds(rounds, steps, build, train_files):
    tw = os.path.join(build, "tools", "tw")
    programs = {
        "coordinator": (["chief=1,ps=1,worker=2"],
                        [os.path.join(ROOT, "examples", "python", "coordinator_trainer.py")],
                        []),
        "mts": (["ps=1,worker=2"], [os.path.join(ROOT, "examples", "python", "trainer.py")],
                ["--save_every=%d" % (10 * steps)]),
    }
    rates = {name: [] for name in programs}
    for _ in range(rounds):
        for name, (cluster, program, extra) in programs.items():
            with tempfile.TemporaryDirectory(prefix="tw_coordinator_bench_") as ckpt:
                cmd = [tw, "launch", "--cluster"] + cluster + ["--", sys.executable] + program + [
                    "--max_steps=%d" % steps, "--log_every=%d" % steps] + extra
                if name == "mts":
                    cmd.append("--checkpoint_dir=" + ckpt)
                if train_files:
                    cmd.append("--train_files=" + train_files)
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
                found = re.search(r"([0-9.]+) examples/s \(all workers", out.stdout)
                if out.returncode != 0 or not found:
                    raise RuntimeError("%s failed:\n%s%s" % (name, out.stdout, out.stderr))
                rates[name].append(float(found.group(1)))
    for name, values in rates.items():
        print("%-12s %8.0f examples/s (median of %d)" % (name, statistics.median(values),
                                                        len(values)))
    print("coordinator / mts: %.3fx (median of per-round ratios)" % statistics.median(
        c / m for c, m in zip(rates["coordinator"], rates["mts"])))


def free_address():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


def coordinator_cost(steps):
    import tensorweave.compat.v1 as tf
    spec = {"ps": [free_address()], "worker": [free_address()]}
    servers = [tf.distribute.Server(spec, job_name=job, task_index=0, _bind_host="127.0.0.1")
               for job in ("ps", "worker")]
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(tf.train.ClusterSpec(spec))
    strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
    with strategy.scope():
        counter = tf.Variable(0, dtype=tf.int64, name="counter")
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
    step = tf.function(lambda: tf.assign_add(counter, 1))
    coordinator.schedule(step).fetch()  # traced, initialized, the worker's session made

    # The same step by a Session on the same worker, one at a time.
    add = tf.get_default_graph().get_operation_by_name("lambda_worker_0/AssignAdd")
    session = tf.Session(servers[1].target,
                         config=tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:0"]))
    session.run(add)
    results = {"schedule": [], "coordinator": [], "session": []}
    for _ in range(3):
        begin = time.perf_counter()
        for _ in range(steps):
            coordinator.schedule(step)
        queued = time.perf_counter()
        coordinator.join()
        end = time.perf_counter()
        results["schedule"].append((queued - begin) / steps)
        results["coordinator"].append((end - begin) / steps)
        begin = time.perf_counter()
        for _ in range(steps):
            session.run(add)
        results["session"].append((time.perf_counter() - begin) / steps)
    session.close()
    schedule = statistics.median(results["schedule"]) * 1e6
    through = statistics.median(results["coordinator"]) * 1e6
    direct = statistics.median(results["session"]) * 1e6
    print("schedule() per call       %7.1f us" % schedule)
    print("step via coordinator      %7.1f us" % through)
    print("step via Session.run      %7.1f us" % direct)
    print("coordinator overhead      %7.1f us per step" % (through - direct))
    for server in servers:
        server.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=6000)
    parser.add_argument("--cost_steps", type=int, default=5000)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--skip_training", action="store_true")
    parser.add_argument("--train_files", default="",
                        help="TFRecord files (examples/python/make_tfrecords.py) both "
                             "trainers read through tf.data, on each worker, instead of "
                             "feeding batches")
    args = parser.parse_args()
    coordinator_cost(args.cost_steps)
    if not args.skip_training:
        trainer_rounds(args.rounds, args.steps, args.build, args.train_files)


if __name__ == "__main__":
    main()
