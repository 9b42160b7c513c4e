"""tf.train.replica_device_setter against TF 1.x's documented placement: variables round robin
over the ps tasks, everything else on the worker, devices named by tf.device merged in
(device_setter_test.py in TF 1.x)."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf

CLUSTER = {"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222", "w1:2222", "w2:2222"]}


def _vars(n, prefix="v"):
    return [tf.Variable(float(i), name="%s%d" % (prefix, i)) for i in range(n)]


def test_round_robin_over_ps_tasks_and_compute_on_the_worker():
    with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
        vs = _vars(7)
        total = tf.add_n([v.value() for v in vs])
    assert [v.device for v in vs] == ["/job:ps/task:%d" % (i % 3) for i in range(7)]
    # The variable's own ops (initializer, read) stay beside it.
    assert vs[4].initializer.device == "/job:ps/task:1"
    assert total.device == "/job:worker"
    assert total.op.device == "/job:worker"


def test_worker_device_with_a_task():
    setter = tf.train.replica_device_setter(ps_tasks=2, worker_device="/job:worker/task:1")
    with tf.device(setter):
        v = tf.Variable([1.0, 2.0])
        a = v * 2.0
    assert v.device == "/job:ps/task:0"
    assert a.device == "/job:worker/task:1"


@pytest.mark.parametrize("as_spec", [True, False])
def test_cluster_gives_the_number_of_ps_tasks(as_spec):
    cluster = tf.train.ClusterSpec(CLUSTER) if as_spec else dict(CLUSTER)
    with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        vs = _vars(3)
        a = vs[0] + vs[1]
    assert [v.device for v in vs] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
    assert a.device == "/job:worker"


def test_cluster_with_other_job_names():
    cluster = tf.train.ClusterSpec({"sun": ["s0:1", "s1:1", "s2:1"], "moon": ["m0:1", "m1:1"]})
    with tf.device(tf.train.replica_device_setter(ps_device="/job:moon",
                                                  worker_device="/job:sun", cluster=cluster)):
        v, w, x = _vars(3)
        a = v + w
    assert [v.device, w.device, x.device] == ["/job:moon/task:0", "/job:moon/task:1",
                                               "/job:moon/task:0"]
    assert a.device == "/job:sun"


def test_no_ps_job_or_no_ps_tasks_gives_none():
    assert tf.train.replica_device_setter(ps_tasks=0) is None
    assert tf.train.replica_device_setter() is None
    assert tf.train.replica_device_setter(cluster={"worker": ["w0:1"]}) is None
    assert tf.train.replica_device_setter(
        cluster=tf.train.ClusterSpec({"worker": ["w0:1", "w1:1"]})) is None
    # None as a device function leaves placement alone (TF's tf.device(None)).
    with tf.device(tf.train.replica_device_setter(cluster={"worker": ["w0:1"]})):
        v = tf.Variable(1.0)
    assert v.device == ""


def test_inner_device_merged_into_the_setters_choice():
    with tf.device(tf.train.replica_device_setter(cluster=CLUSTER)):
        with tf.device("/cpu:0"):
            v = tf.Variable([1, 2])
        w = tf.Variable([2, 1])
        with tf.device("/cpu:0"):
            a = v + w
    assert v.device == "/job:ps/task:0/device:CPU:0"
    assert v.initializer.device == "/job:ps/task:0/device:CPU:0"
    assert w.device == "/job:ps/task:1"
    assert a.device == "/job:worker/device:CPU:0"


def test_variable_pinned_to_a_ps_task_stays_there_and_takes_a_turn():
    # TF calls the strategy for a variable whose device names the ps job (or no job), then
    # merges the variable's own device over its choice: the task named wins, the turn is
    # spent.
    with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
        v0 = tf.Variable(0.0, name="v0")                  # task 0
        with tf.device("/job:ps/task:2"):
            pinned = tf.Variable(1.0, name="pinned")      # turn 1 spent, stays on task 2
        v2 = tf.Variable(2.0, name="v2")                  # task 2
        v3 = tf.Variable(3.0, name="v3")                  # task 0
    assert v0.device == "/job:ps/task:0"
    assert pinned.device == "/job:ps/task:2"
    assert v2.device == "/job:ps/task:2"
    assert v3.device == "/job:ps/task:0"


def test_variable_pinned_to_another_job_keeps_it_and_takes_no_turn():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        v0 = tf.Variable(0.0, name="v0")
        with tf.device("/job:local/task:3"):
            local = tf.Variable(1.0, name="local")
        with tf.device("/job:worker"):
            on_worker = tf.Variable(1.0, name="on_worker")
        v1 = tf.Variable(2.0, name="v1")
    assert local.device == "/job:local/task:3"
    assert on_worker.device == "/job:worker"
    assert [v0.device, v1.device] == ["/job:ps/task:0", "/job:ps/task:1"]


def test_outer_device_fills_in_what_the_setter_leaves_unset():
    with tf.device("/device:CPU:0"):
        with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
            v = tf.Variable(1.0)
            a = v * 2.0
    assert v.device == "/job:ps/task:0/device:CPU:0"
    assert a.device == "/job:worker/device:CPU:0"


def test_outer_job_does_not_override_the_setter():
    # The innermost device function decides first; an outer device string only fills in
    # fields left unset.
    with tf.device("/job:elsewhere/task:7"):
        with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
            v = tf.Variable(1.0)
            a = v * 2.0
    assert v.device == "/job:ps/task:0"
    assert a.device == "/job:worker/task:7"


def test_merge_devices_false_keeps_a_named_device_whole():
    with tf.device(tf.train.replica_device_setter(cluster=CLUSTER, merge_devices=False)):
        v = tf.Variable([1, 2])
        with tf.device("/job:ps"):  # no task assigned, no turn spent
            w = tf.Variable([2, 1])
        with tf.device("/cpu:0"):
            c = tf.Variable([3, 3])
            d = v + c
        x = tf.Variable([0, 0])
        a = v + w
    assert v.device == "/job:ps/task:0"
    assert w.device == "/job:ps"
    assert w.initializer.device == "/job:ps"
    assert c.device == "/device:CPU:0"
    assert d.device == "/device:CPU:0"
    assert x.device == "/job:ps/task:1"
    assert a.device == "/job:worker"


def test_ps_device_with_a_device_part():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2,
                                                  ps_device="/job:ps/device:CPU:0")):
        v, w = _vars(2)
        a = v + w
    assert v.device == "/job:ps/task:0/device:CPU:0"
    assert w.device == "/job:ps/task:1/device:CPU:0"
    assert a.device == "/job:worker"


def test_greedy_load_balancing_by_bytes():
    strategy = tf.train.GreedyLoadBalancingStrategy(2, tf.train.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=strategy)):
        big = tf.Variable(np.zeros([100, 10], np.float32), name="big")      # 4000 bytes
        small1 = tf.Variable(np.zeros([10], np.float32), name="small1")     # 40
        small2 = tf.Variable(np.zeros([10], np.float32), name="small2")     # 40
        mid = tf.Variable(np.zeros([50], np.float64), name="mid")           # 400
        after = tf.Variable(np.zeros([1000], np.float32), name="after")     # 4000
        last = tf.Variable(np.zeros([1], np.float32), name="last")
    assert big.device == "/job:ps/task:0"
    assert small1.device == "/job:ps/task:1"
    assert small2.device == "/job:ps/task:1"
    assert mid.device == "/job:ps/task:1"
    assert after.device == "/job:ps/task:1"   # 480 < 4000
    assert last.device == "/job:ps/task:0"    # 4000 < 4480


def test_byte_size_load_fn():
    v = tf.Variable(np.zeros([3, 5], np.float64))
    i = tf.Variable(np.zeros([7], np.int32))
    assert tf.train.byte_size_load_fn(v.op) == 3 * 5 * 8
    assert tf.train.byte_size_load_fn(i.op) == 7 * 4


def test_greedy_ties_go_to_the_lowest_task():
    strategy = tf.train.GreedyLoadBalancingStrategy(3, lambda op: 1)
    with tf.device(tf.train.replica_device_setter(ps_tasks=3, ps_strategy=strategy)):
        vs = _vars(5)
    assert [v.device for v in vs] == ["/job:ps/task:%d" % t for t in (0, 1, 2, 0, 1)]


def test_custom_strategy_sees_the_operation():
    seen = []

    def strategy(op):
        seen.append((op.type, op.name))
        return 1 if op.name.startswith("b") else 0

    with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=strategy)):
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(1.0, name="b")
        c = tf.Variable(1.0, name="c")
        s = a + b
    assert seen == [("Variable", "a"), ("Variable", "b"), ("Variable", "c")]
    assert [a.device, b.device, c.device] == ["/job:ps/task:0", "/job:ps/task:1",
                                              "/job:ps/task:0"]
    assert s.device == "/job:worker"


def test_cluster_of_another_type_is_refused():
    with pytest.raises(TypeError, match="cluster must be a dictionary or ClusterSpec"):
        tf.train.replica_device_setter(cluster=["ps0:1"])


def test_strategy_must_be_callable():
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        tf.train.replica_device_setter(ps_tasks=2, ps_strategy=3)


def test_ps_ops_choose_what_goes_to_the_ps_tasks():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2,
                                                  ps_ops=["Variable", "FIFOQueue"])):
        v = tf.Variable(1.0)
        q = tf.FIFOQueue(4, tf.float32)
    assert v.device == "/job:ps/task:0"
    assert q.queue_ref.device == "/job:ps/task:1"

    tf.reset_default_graph()
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_ops=["FIFOQueue"])):
        v = tf.Variable(1.0)
        q = tf.FIFOQueue(4, tf.float32)
    assert v.device == "/job:worker"  # no longer a ps op
    assert q.queue_ref.device == "/job:ps/task:0"


def test_global_step_takes_a_round_robin_turn():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        v = tf.Variable(1.0, name="v")
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(1.0, name="w")
    assert v.device == "/job:ps/task:0"
    assert step.device == "/job:ps/task:1"
    assert w.device == "/job:ps/task:0"


def test_each_setter_has_its_own_round_robin():
    setter1 = tf.train.replica_device_setter(ps_tasks=2)
    setter2 = tf.train.replica_device_setter(ps_tasks=2)
    with tf.device(setter1):
        a = tf.Variable(1.0)
    with tf.device(setter2):
        b = tf.Variable(1.0)
    with tf.device(setter1):
        c = tf.Variable(1.0)
    assert [a.device, b.device, c.device] == ["/job:ps/task:0", "/job:ps/task:0",
                                              "/job:ps/task:1"]


def test_a_placed_graph_runs_on_a_local_server():
    # Placement is real: the one-task cluster of a local server runs the placed graph.
    server = tf.train.Server.create_local_server()
    address = server.target[len("grpc://"):]
    setter = tf.train.replica_device_setter(ps_device="/job:localhost",
                                            worker_device="/job:localhost",
                                            cluster={"localhost": [address]})
    with tf.device(setter):
        v = tf.Variable([1.0, 2.0])
        y = v * 3.0
    assert v.device == "/job:localhost/task:0"
    assert y.device == "/job:localhost"
    with tf.Session(server.target) as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(y), [3.0, 6.0])
