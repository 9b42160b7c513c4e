"""What real TF 1.x programs relied on and tensorweave lacked, each behaviour in its own
test: checkpoints with no set-up on a cluster, the global step found by name and of float
dtype, control_dependencies around ops built in C++, lists of tensors packed, static shapes
of gradients, two optimizers of one kind, the version, seeds, ServerDef and ClusterDef,
in_top_k, tf.losses, and missing names that say which issue brings them."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf
from conftest import free_address, in_process_cluster


def test_monitored_training_session_checkpoints_with_no_allowed_directories(tmp_path,
                                                                            monkeypatch):
    """The chief saves and restores a model whose variables live on two ps tasks that name
    no allowed directory: the chief's process writes the files."""
    monkeypatch.delenv("TW_ALLOWED_DIRECTORIES", raising=False)
    servers = in_process_cluster(2)
    try:
        with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
            step = tf.train.get_or_create_global_step()
            w = tf.Variable([1.0, 2.0], name="w")
            b = tf.Variable(3.0, name="b")
            train = tf.group(tf.assign_add(w, [1.0, 1.0]), tf.assign_add(step, 1))
        assert {w.device, b.device} == {"/job:ps/task:0", "/job:ps/task:1"}
        with tf.train.MonitoredTrainingSession(
                master=servers[-1].target, is_chief=True, checkpoint_dir=str(tmp_path),
                save_checkpoint_steps=2,
                hooks=[tf.train.StopAtStepHook(last_step=4)]) as sess:
            while not sess.should_stop():
                sess.run(train)
        assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-4")
        assert len(list(tmp_path.glob("model.ckpt-4.data-*-of-00002"))) == 2

        # A new chief restores from the directory.
        with tf.train.MonitoredTrainingSession(master=servers[-1].target, is_chief=True,
                                               checkpoint_dir=str(tmp_path)) as sess:
            np.testing.assert_array_equal(sess.run(w), [5.0, 6.0])
            assert sess.run(step) == 4
    finally:
        for server in servers:
            server.stop()


def test_supervisor_saves_on_a_cluster_with_no_allowed_directories(tmp_path, monkeypatch):
    """Under a Supervisor, the first save used to stop the coordinator (PermissionDenied on
    the ps task) and the chief left after one step; now it trains to its last step."""
    monkeypatch.delenv("TW_ALLOWED_DIRECTORIES", raising=False)
    servers = in_process_cluster(1)
    try:
        with tf.device(tf.train.replica_device_setter(ps_tasks=1)):
            step = tf.train.get_or_create_global_step()
            v = tf.Variable(0.0, name="v")
            train = tf.group(tf.assign_add(v, 1.0), tf.assign_add(step, 1))
        sv = tf.train.Supervisor(is_chief=True, logdir=str(tmp_path), global_step=step,
                                 save_model_secs=0)
        with sv.managed_session(servers[-1].target) as sess:
            for _ in range(5):
                sess.run(train)
            sv.saver.save(sess, sv.save_path, global_step=step)
            assert not sv.should_stop()
        sv.stop()
        assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-5")
    finally:
        for server in servers:
            server.stop()


def test_a_write_on_variable_tasks_saver_needs_the_tasks_allowed_directory(tmp_path,
                                                                           monkeypatch):
    """The ps-side option keeps TF's sharded writes, and with them the tasks' rule."""
    monkeypatch.delenv("TW_ALLOWED_DIRECTORIES", raising=False)
    servers = in_process_cluster(1)
    try:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable([1.0], name="v")
        saver = tf.train.Saver(write_on_variable_tasks=True)
        with tf.Session(servers[-1].target) as sess:
            sess.run(v.initializer)
            with pytest.raises(tf.errors.PermissionDeniedError, match="allowed: none"):
                saver.save(sess, str(tmp_path / "model"))
        assert list(tmp_path.iterdir()) == []
    finally:
        for server in servers:
            server.stop()


def test_a_session_in_the_tasks_own_process_may_touch_files(tmp_path, monkeypatch):
    """The program's own session on its server's target is the program itself: even the
    checkpoint ops that run on the task write where it asks, with no allowed directory."""
    monkeypatch.delenv("TW_ALLOWED_DIRECTORIES", raising=False)
    server = tf.train.Server.create_local_server()
    try:
        v = tf.Variable([1.0, 2.0], name="v")
        saver = tf.train.Saver(write_on_variable_tasks=True)
        with tf.Session(server.target) as sess:
            sess.run(v.initializer)
            prefix = saver.save(sess, str(tmp_path / "model"))
            sess.run(v.assign([0.0, 0.0]))
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
    finally:
        server.stop()


def test_get_global_step_finds_a_variable_named_global_step():
    step = tf.Variable(0, name="global_step", trainable=False)
    assert tf.train.get_global_step() is step
    hook = tf.train.StopAtStepHook(last_step=3)
    train = tf.assign_add(step, 1)
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        runs = 0
        while not sess.should_stop():
            sess.run(train)
            runs += 1
    assert runs == 3


def test_minimize_increments_a_float_global_step():
    step = tf.get_variable("global_step", [], initializer=tf.constant_initializer(0),
                           trainable=False)
    assert step.dtype == tf.float32
    x = tf.Variable(1.0)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(x * x, global_step=step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        sess.run(train)
        assert sess.run(step) == 2.0
    # As TF's get_global_step, a float one found by name is refused by the hooks' lookup.
    with pytest.raises(TypeError, match="does not have integer type"):
        tf.train.get_global_step()


def test_a_supervisor_saves_at_a_float_global_step(tmp_path):
    """A Supervisor given a float global step (get_variable's default dtype) names its
    checkpoints by the step's value, as TF does."""
    step = tf.get_variable("global_step", [], initializer=tf.constant_initializer(0),
                           trainable=False)
    x = tf.Variable(1.0)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(x * x, global_step=step)
    sv = tf.train.Supervisor(logdir=str(tmp_path), global_step=step, save_model_secs=0,
                             save_summaries_secs=0)
    with sv.managed_session() as sess:
        sess.run(train)
        sess.run(train)
        sv.saver.save(sess, sv.save_path, global_step=step)
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-2")


def test_control_dependencies_apply_to_the_gradient_and_optimizer_ops():
    """Ops built in C++ inside control_dependencies run after the controls, as ops built in
    Python do: running the train op alone runs the counter's update first."""
    v = tf.Variable(1.0, name="v")
    counter = tf.Variable(0, name="counter")
    bump = tf.assign_add(counter, 1)
    with tf.control_dependencies([bump]):
        train = tf.train.GradientDescentOptimizer(0.1).minimize(v * v)
    graph = tf.get_default_graph()
    built_in_cpp = [op for op in graph.get_operations()
                    if op.name.startswith(("gradients/", "GradientDescent/"))]
    assert any(bump.op in op.control_inputs for op in built_in_cpp)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        sess.run(train)
        assert sess.run(counter) == 2
        assert sess.run(v) == pytest.approx(1.0 * 0.8 * 0.8)


def test_optimizer_slots_made_inside_control_dependencies_initialize_alone():
    """Slots are variables: initializing them never runs the ops the update was ordered
    after (TF builds them outside the block)."""
    v = tf.Variable(1.0, name="v")
    counter = tf.Variable(0, name="counter")
    bump = tf.assign_add(counter, 1)
    with tf.control_dependencies([bump]):
        tf.train.AdamOptimizer(0.1).minimize(v * v)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(counter) == 0


def test_lists_of_tensors_are_packed():
    a = tf.constant([1.0, 2.0])
    b = tf.constant([3.0, 4.0])
    total = tf.reduce_sum([a, b], axis=0)
    nested = tf.convert_to_tensor([[a, [5.0, 6.0]], [b, a]])
    assert nested.shape.as_list() == [2, 2, 2]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(total), [4.0, 6.0])
        np.testing.assert_array_equal(sess.run(nested)[0, 1], [5.0, 6.0])


def test_constant_from_a_range_with_a_shape():
    with tf.Session() as sess:
        value = sess.run(tf.constant(range(100), shape=[10, 10]))
    np.testing.assert_array_equal(value, np.arange(100).reshape(10, 10))


def test_gradients_have_static_shapes():
    a = tf.placeholder(tf.float32, [None, 3])
    b = tf.Variable(tf.zeros([3]))
    grad_a, grad_b = tf.gradients(tf.reduce_sum(a + b), [a, b])
    assert grad_a.shape.as_list() == [None, 3]
    assert grad_b.shape.as_list() == [3]


def test_indexing_a_tensor_of_unknown_rank():
    x = tf.placeholder(tf.float32)
    first, column = x[0], x[:, 1]
    with tf.Session() as sess:
        value = np.arange(6, dtype=np.float32).reshape(2, 3)
        np.testing.assert_array_equal(sess.run(first, {x: value}), [0, 1, 2])
        np.testing.assert_array_equal(sess.run(column, {x: value}), [1, 4])


def test_two_optimizers_of_one_kind_get_tf_slot_names():
    """TF makes each slot's scope unique: the second Adam's m and v of "v" are "v/Adam_2"
    and "v/Adam_1_1", its powers "beta1_power_1" and "beta2_power_1"."""
    v = tf.Variable(1.0, name="v")
    adam, other = tf.train.AdamOptimizer(0.1), tf.train.AdamOptimizer(0.1)
    first = adam.minimize(v * v)
    second = other.minimize(v * v)
    names = sorted(x.op.name for x in tf.global_variables())
    assert names == ["beta1_power", "beta1_power_1", "beta2_power", "beta2_power_1", "v",
                     "v/Adam", "v/Adam_1", "v/Adam_1_1", "v/Adam_2"]
    assert adam.get_slot(v, "m").op.name == "v/Adam"
    assert other.get_slot(v, "m").op.name == "v/Adam_2"
    assert other.get_slot(v, "v").op.name == "v/Adam_1_1"
    assert sorted(x.op.name for x in other.variables()) == [
        "beta1_power_1", "beta2_power_1", "v/Adam_1_1", "v/Adam_2"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([first, second])


def test_version_and_seed():
    assert tf.__version__ == tf.VERSION and tf.__version__.startswith("1.")
    assert "tensorweave" in tf.__git_version__
    tf.set_random_seed(42)
    first = tf.random_normal([4])
    with tf.Session() as sess:
        a = sess.run(first)
    tf.reset_default_graph()
    tf.set_random_seed(42)
    second = tf.random_normal([4])
    with tf.Session() as sess:
        b = sess.run(second)
    np.testing.assert_array_equal(a, b)


def test_server_def_and_cluster_def_are_protocol_buffers():
    spec = tf.train.ClusterSpec({"ps": ["127.0.0.1:1"], "worker": ["127.0.0.1:2", "h:3"]})
    cluster_def = spec.as_cluster_def()
    assert isinstance(cluster_def, tf.train.ClusterDef)
    assert tf.train.ClusterSpec(cluster_def) == spec
    # TF's field numbers: the bytes a TensorFlow program would write decode here.
    job = tf.train.JobDef(name="ps")
    job.tasks[1] = "127.0.0.1:1"
    assert job.SerializeToString() == b"\n\x02ps\x12\x0f\x08\x01\x12\x0b127.0.0.1:1"
    address = free_address()
    server_def = tf.train.ServerDef(
        cluster=tf.train.ClusterSpec({"local": [address]}).as_cluster_def(),
        job_name="local", task_index=0, protocol="grpc")
    server = tf.train.Server(server_def, _bind_host="127.0.0.1")
    try:
        assert server.server_def.job_name == "local"
        assert server.server_def.cluster == server_def.cluster
        with tf.Session(server.target) as sess:
            assert sess.run(tf.constant(3)) == 3
    finally:
        server.stop()


def test_in_top_k():
    predictions = tf.constant([[0.1, 0.5, 0.5], [0.9, 0.8, 0.7]])
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(tf.nn.in_top_k(predictions, [2, 2], 1)),
                                      [True, False])
        np.testing.assert_array_equal(sess.run(tf.nn.in_top_k(predictions, [0, 2], 3)),
                                      [True, True])


def test_losses_reduce_as_tf_and_fill_the_collection():
    labels = np.array([[0.0, 1.0], [1.0, 0.0]], np.float32)
    predictions = np.array([[0.5, 0.5], [2.0, -1.0]], np.float32)
    weights = np.array([[1.0, 0.0], [2.0, 1.0]], np.float32)
    mse = tf.losses.mean_squared_error(labels, predictions, weights=weights)
    absolute = tf.losses.absolute_difference(labels, predictions)
    summed = tf.losses.mean_squared_error(labels, predictions,
                                          reduction=tf.losses.Reduction.SUM)
    huber = tf.losses.huber_loss(labels, predictions, delta=1.0)
    logits = np.array([[2.0, -1.0], [0.5, 0.5]], np.float32)
    sigmoid = tf.losses.sigmoid_cross_entropy(labels, logits)
    softmax = tf.losses.softmax_cross_entropy(labels, logits, label_smoothing=0.2)
    sparse = tf.losses.sparse_softmax_cross_entropy(np.array([1, 0]), logits)
    assert len(tf.losses.get_losses()) == 7
    total = tf.losses.get_total_loss()
    squared = (predictions - labels) ** 2
    error = np.abs(predictions - labels)
    quadratic = np.minimum(error, 1.0)
    smooth = labels * 0.8 + 0.2 / 2
    log_softmax = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    expected = {
        "mse": (squared * weights).sum() / 3,
        "absolute": error.mean(),
        "summed": squared.sum(),
        "huber": (0.5 * quadratic ** 2 + (error - quadratic)).mean(),
        "sigmoid": (np.maximum(logits, 0) - logits * labels +
                    np.log1p(np.exp(-np.abs(logits)))).mean(),
        "softmax": -(smooth * log_softmax).sum(axis=1).mean(),
        "sparse": -np.array([log_softmax[0, 1], log_softmax[1, 0]]).mean(),
    }
    with tf.Session() as sess:
        got = sess.run({"mse": mse, "absolute": absolute, "summed": summed, "huber": huber,
                        "sigmoid": sigmoid, "softmax": softmax, "sparse": sparse,
                        "total": total})
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-5), key
    assert got["total"] == pytest.approx(sum(expected.values()), rel=1e-5)


def test_missing_names_say_which_issue_brings_them():
    with pytest.raises(AttributeError, match=r"tf\.nn\.conv3d is not in tensorweave yet, and "
                                             r"no open issue brings it"):
        tf.nn.conv3d  # noqa: B018
    with pytest.raises(AttributeError, match=r"tf\.data\.experimental\.group_by_window is "
                                             r"not in tensorweave yet, and no open issue"):
        tf.data.experimental.group_by_window  # noqa: B018
    with pytest.raises(AttributeError, match=r"tf\.saved_model\.save.*issue #33"):
        tf.saved_model.save  # noqa: B018
    with pytest.raises(AttributeError, match=r"tf\.while_loop.*issue #34"):
        tf.while_loop  # noqa: B018
    with pytest.raises(AttributeError, match="no_such_name"):
        tf.no_such_name  # noqa: B018
    assert not hasattr(tf.nn, "conv3d")


def test_replica_device_setter_takes_a_server_defs_cluster():
    """Kubeflow's smoke test builds its setter from `server_def.cluster`, a ClusterDef."""
    server_def = tf.train.ServerDef(
        cluster=tf.train.ClusterSpec({"ps": ["a:1", "b:2"], "worker": ["c:3"]}).as_cluster_def(),
        job_name="worker", task_index=0)
    setter = tf.train.replica_device_setter(worker_device="/job:worker/task:0",
                                            cluster=server_def.cluster)
    with tf.device(setter):
        first, second = tf.Variable(1.0), tf.Variable(2.0)
        product = first * second
    assert (first.device, second.device) == ("/job:ps/task:0", "/job:ps/task:1")
    assert product.device == "/job:worker/task:0"


def test_every_name_the_table_says_is_coming_is_missing_and_says_so():
    """The table of names still to come never hides a name that exists (a later issue that
    adds one must take it out), and each says its issue."""
    from tensorweave.compat.v1 import _coming
    for key, issue in _coming.COMING.items():
        namespace, _, name = key.rpartition(".")
        module = tf
        for part in filter(None, namespace.split(".")):
            module = getattr(module, part)
        said = "no open issue brings it" if issue == _coming.LATER else r"issue #%d" % issue
        with pytest.raises(AttributeError, match=said):
            getattr(module, name)
