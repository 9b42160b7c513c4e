"""A ParameterServerStrategy program as TF 2's coordinator examples write it, for `tw launch`
with chief, ps and worker tasks: ps and workers serve; the chief schedules steps that each
add one to a counter on the ps task, in rounds, until it has scheduled --steps and (with
--wait_for_recovery) a worker that failed has come back and run steps again. Each worker
writes its pid to --pid_dir so that a test can kill it. The chief prints one JSON line."""

import argparse
import json
import os
import time

import tensorweave.compat.v1 as tf


def serve(resolver, pid_dir):
    server = tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type,
                                  task_index=resolver.task_id)
    if pid_dir:
        path = os.path.join(pid_dir, "%s-%d.pid" % (resolver.task_type, resolver.task_id))
        with open(path + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.replace(path + ".tmp", path)
    server.join()


def coordinate(resolver, args):
    strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
    with strategy.scope():
        applied = tf.Variable(0, dtype=tf.int64, name="applied")
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(
        strategy, retry_interval_secs=0.2)

    @tf.function
    def step(weight):
        # Some work on the worker before the update, so a kill lands mid-step too.
        x = tf.random.uniform([64, 64])
        work = tf.reduce_sum(tf.matmul(x, x)) * 0.0
        return tf.assign_add(applied, tf.cast(weight + work, tf.int64))

    scheduled = 0
    deadline = time.time() + args.timeout
    progress = os.path.join(args.pid_dir, "progress") if args.pid_dir else None
    while time.time() < deadline:
        for _ in range(50):
            coordinator.schedule(step, args=(1.0,))
        scheduled += 50
        coordinator.join()
        if progress:
            with open(progress + ".tmp", "w") as f:
                f.write(str(scheduled))
            os.replace(progress + ".tmp", progress)
        stats = coordinator._stats()
        recovered = (stats["worker_recoveries"] > 0 and
                     all(stats["worker_available"]))
        if scheduled >= args.steps and (not args.wait_for_recovery or recovered):
            break
    total = coordinator.schedule(tf.function(lambda: applied.read_value())).fetch()
    stats = coordinator._stats()
    print(json.dumps({**stats, "scheduled": scheduled, "applied": int(total)}), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--pid_dir", default="")
    parser.add_argument("--wait_for_recovery", action="store_true")
    parser.add_argument("--timeout", type=float, default=90)
    args = parser.parse_args()
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    if resolver.task_type in ("ps", "worker"):
        serve(resolver, args.pid_dir)
    else:
        coordinate(resolver, args)


if __name__ == "__main__":
    main()
