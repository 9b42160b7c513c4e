"""tf.distribute.experimental.ParameterServerStrategy and its ClusterCoordinator: one
program drives ps and worker servers (here in this process, on loopback; the kill -9 test
runs them as processes under `tw launch`)."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf
from conftest import free_address


def _cluster(num_workers=2, num_ps=1):
    spec = {"ps": [free_address() for _ in range(num_ps)],
            "worker": [free_address() for _ in range(num_workers)]}
    servers = [tf.distribute.Server(spec, job_name=job, task_index=i, _bind_host="127.0.0.1")
               for job in ("ps", "worker") for i in range(len(spec[job]))]
    return spec, servers


def _strategy(spec, **kwargs):
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(tf.train.ClusterSpec(spec))
    return tf.distribute.experimental.ParameterServerStrategy(resolver, **kwargs)


def test_scheduled_steps_update_ps_variables_from_every_worker():
    spec, _ = _cluster()
    strategy = _strategy(spec)
    with strategy.scope():
        total = tf.Variable(0.0, name="total")
        steps = tf.Variable(0, name="steps")
    assert total.device.startswith("/job:ps")
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)

    @tf.function
    def add(amount):
        # No control dependency: the coordinator runs the trace's stateful ops, as
        # tf.function's automatic control dependencies do.
        tf.assign_add(steps, 1)
        return tf.assign_add(total, amount * 2.0)

    values = [coordinator.schedule(add, args=(float(i),)) for i in range(1, 41)]
    coordinator.join()
    assert coordinator.done()
    fetched = sorted(v.fetch() for v in values)
    # Each call doubled its own amount into the total: the running totals are distinct.
    assert len(set(fetched)) == 40
    assert fetched[-1] == pytest.approx(2.0 * sum(range(1, 41)))
    read = coordinator.schedule(tf.function(lambda: (total.read_value(), steps.read_value())))
    assert read.fetch() == (pytest.approx(1640.0), 40)
    # ClusterCoordinator.fetch: RemoteValues in a structure fetched, other values kept.
    assert coordinator.fetch({"read": read, "n": 3}) == {"read": (pytest.approx(1640.0), 40),
                                                         "n": 3}
    stats = coordinator._stats()
    assert stats["completed_by_worker"][0] > 0 and stats["completed_by_worker"][1] > 0
    # One trace per worker, its replica on that worker.
    graph = tf.get_default_graph()
    for worker in (0, 1):
        op = graph.get_operation_by_name("add_worker_%d/mul" % worker)
        assert op.device.startswith("/job:worker/task:%d" % worker)


def test_per_worker_datasets_are_read_on_their_worker():
    spec, _ = _cluster()
    strategy = _strategy(spec)
    with strategy.scope():
        seen = tf.Variable(0, dtype=tf.int64, name="seen")
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)

    def dataset_fn(context):
        # Worker k reads the k-th shard of 0..99, over and over (workers take steps from one
        # queue, so one may run more steps than the other).
        return (tf.data.Dataset.range(100)
                .shard(context.num_input_pipelines, context.input_pipeline_id).repeat()
                .batch(10))

    per_worker = coordinator.create_per_worker_dataset(
        lambda: strategy.distribute_datasets_from_function(dataset_fn))
    iterator = iter(per_worker)

    @tf.function
    def step(iterator):
        batch = next(iterator)
        return batch, tf.assign_add(seen, tf.reduce_sum(batch))

    values = [coordinator.schedule(step, args=(iterator,)) for _ in range(20)]
    coordinator.join()
    batches = [v.fetch()[0] for v in values]
    # Each batch is ten elements of one worker's shard: all even or all odd.
    for batch in batches:
        assert len(batch) == 10 and len(set(batch % 2)) == 1, batch
    final = coordinator.schedule(tf.function(lambda: seen.read_value())).fetch()
    assert final == sum(int(b.sum()) for b in batches)
    graph = tf.get_default_graph()
    iterators = [op for op in graph.get_operations() if op.type == "OneShotIterator"]
    assert sorted(op.device.split("/device")[0] for op in iterators) == [
        "/job:worker/task:0", "/job:worker/task:1"]


def test_a_kernel_error_is_raised_once_by_join_and_by_fetch():
    spec, _ = _cluster(num_workers=1)
    strategy = _strategy(spec)
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)

    bad = coordinator.schedule(tf.function(lambda s: tf.string_to_number(s)),
                               args=(np.array([b"1.5", b"abc"], dtype=object),))
    with pytest.raises(tf.errors.InvalidArgumentError, match="abc"):
        bad.fetch()
    with pytest.raises(tf.errors.InvalidArgumentError, match="abc"):
        coordinator.join()
    coordinator.join()  # raised once
    good = coordinator.schedule(tf.function(lambda x: x * 2), args=(np.arange(3.0),))
    np.testing.assert_allclose(good.fetch(), [0.0, 2.0, 4.0])


def test_variables_made_in_a_trace_are_initialized_once_and_kept():
    spec, _ = _cluster()
    strategy = _strategy(spec)
    with strategy.scope():
        w = tf.get_variable("w", initializer=tf.constant([1.0, 2.0]))
    optimizer = tf.train.AdamOptimizer(0.1)
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)

    @tf.function
    def train():
        loss = tf.reduce_sum(tf.square(w))
        optimizer.minimize(loss)  # its slots are made by the first trace, on the ps task
        return loss

    losses = [coordinator.schedule(train).fetch() for _ in range(30)]
    assert losses[-1] < losses[0]
    for slot in optimizer.variables():
        assert slot.device.startswith("/job:ps"), slot.device


def test_partitioner_splits_variables_over_the_ps_tasks():
    spec, _ = _cluster(num_workers=1, num_ps=2)
    strategy = _strategy(
        spec, variable_partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner(2))
    with strategy.scope():
        embedding = tf.get_variable("embedding", shape=[10, 4],
                                    initializer=tf.ones_initializer())
    parts = list(embedding)
    assert len(parts) == 2
    assert sorted(p.device.split("/device")[0] for p in parts) == ["/job:ps/task:0",
                                                                  "/job:ps/task:1"]
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
    total = coordinator.schedule(tf.function(
        lambda: tf.reduce_sum(tf.nn.embedding_lookup(embedding, [0, 9])))).fetch()
    assert total == 8.0


def test_partitioners_check_their_arguments_and_split_as_tf():
    partitioners = tf.distribute.experimental.partitioners
    assert partitioners.FixedShardsPartitioner(3)(tf.TensorShape([10, 2]), tf.float32) == [3, 1]
    assert partitioners.MinSizePartitioner(min_shard_bytes=4, max_shards=2)(
        tf.TensorShape([6, 1]), tf.float32) == [2, 1]
    assert partitioners.MaxSizePartitioner(max_shard_bytes=8)(
        tf.TensorShape([6, 1]), tf.float32) == [3, 1]
    with pytest.raises(ValueError, match="min_shard_bytes"):
        partitioners.MinSizePartitioner(min_shard_bytes=0)
    with pytest.raises(ValueError, match="max_shard_bytes"):
        partitioners.MaxSizePartitioner(max_shard_bytes=0)


def test_strategy_needs_ps_and_worker_jobs():
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec({"worker": ["127.0.0.1:1"]}))
    with pytest.raises(ValueError, match="\"ps\" and \"worker\" jobs"):
        tf.distribute.experimental.ParameterServerStrategy(resolver)


def test_strategy_run_and_reduce():
    spec = {"ps": ["127.0.0.1:1"], "worker": ["127.0.0.1:2", "127.0.0.1:3"]}
    strategy = _strategy(spec)
    assert strategy.num_replicas_in_sync == 1
    assert strategy.extended.worker_devices[1] == "/job:worker/replica:0/task:1/device:CPU:0"
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    out = strategy.run(lambda a, b: a * b, args=(x, 2.0))
    summed = strategy.reduce(tf.distribute.ReduceOp.SUM, out, axis=0)
    mean = strategy.reduce("MEAN", out, axis=None)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(summed), [8.0, 12.0])
        np.testing.assert_allclose(sess.run(mean), [[2.0, 4.0], [6.0, 8.0]])


PROGRAM = str(__import__("pathlib").Path(__file__).parent / "programs" / "coordinator_cluster.py")


def test_a_worker_killed_mid_training_loses_no_step_and_rejoins(tw_tool, tmp_path):
    """chief (the coordinator), a ps and 2 workers under tw launch --restart on-failure:
    worker 1 is killed with SIGKILL while steps run; its steps run on worker 0, tw launch
    starts it again, and it takes steps again. Every scheduled step is applied; a step its
    worker died in after the update reached the ps may be applied twice (at most one per
    failure: a worker runs one step at a time)."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import time
    from conftest import python_env
    launch = subprocess.Popen(
        [tw_tool, "launch", "--cluster", "chief=1,ps=1,worker=2", "--restart", "on-failure",
         "--restart-delay", "0.5", "--", sys.executable, PROGRAM, "--pid_dir=%s" % tmp_path,
         "--steps=1500", "--wait_for_recovery", "--timeout=90"],
        env=python_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        pid_file, progress = tmp_path / "worker-1.pid", tmp_path / "progress"
        deadline = time.time() + 60
        while time.time() < deadline and not (
                pid_file.exists() and progress.exists() and int(progress.read_text()) >= 200):
            time.sleep(0.05)
        assert progress.exists() and int(progress.read_text()) >= 200, "no progress"
        victim = int(pid_file.read_text())
        os.kill(victim, signal.SIGKILL)
        output, _ = launch.communicate(timeout=150)
    finally:
        if launch.poll() is None:
            launch.kill()
            launch.communicate()
    assert launch.returncode == 0, output
    line = next(l for l in output.splitlines() if '"scheduled"' in l)
    result = json.loads(line[line.index("{"):])
    assert result["scheduled"] >= 1500, result
    assert result["worker_failures"] >= 1 and result["rescheduled"] >= 1, result
    assert result["worker_recoveries"] >= 1, result
    assert result["scheduled"] <= result["applied"] <= (
        result["scheduled"] + result["worker_failures"]), result
    assert int(pid_file.read_text()) != victim  # started again, and it ran steps after
    assert all(result["worker_available"]), result


def test_a_lost_ps_task_is_the_programs_error_and_its_checkpoint_restores_training(tmp_path):
    # The monitored-session pattern for a coordinator program: it checkpoints the model (the
    # chief's Saver, values fetched from the ps tasks), and when a ps task is lost the error
    # comes to it; it starts the task again, restores the checkpoint and goes on.
    spec, servers = _cluster(num_workers=1)
    strategy = _strategy(spec)
    with strategy.scope():
        counter = tf.Variable(0, name="counter")
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
    add = tf.function(lambda: tf.assign_add(counter, 1))
    read = tf.function(lambda: counter.read_value())
    saver = tf.train.Saver([counter])
    for _ in range(5):
        coordinator.schedule(add)
    coordinator.join()
    with tf.Session(servers[1].target) as sess:
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=5)
    for _ in range(2):
        coordinator.schedule(add)
    coordinator.join()
    assert coordinator.schedule(read).fetch() == 7
    servers[0].stop()  # the ps task is lost, with the counter
    coordinator.schedule(add)
    with pytest.raises((tf.errors.UnavailableError, tf.errors.AbortedError)):
        coordinator.join()
    tf.distribute.Server(spec, job_name="ps", task_index=0, _bind_host="127.0.0.1")
    with tf.Session(servers[1].target) as sess:
        saver.restore(sess, path)
    for _ in range(3):
        coordinator.schedule(add)
    coordinator.join()
    assert coordinator.schedule(read).fetch() == 8  # the checkpoint's 5, then 3 more
