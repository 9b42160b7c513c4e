"""tf.gather_nd, scatter_nd, top_k, argmin, segment sums, boolean_mask, the variable
scatter_* updates (also on a ps task of a local cluster), and the checks (check_numerics,
Assert, the tf.debugging asserts, Print) over the C++ ops: values against numpy, TF's
errors."""

import socket

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def run(*fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches), feed_dict=feed_dict)


def test_gather_nd_and_scatter_nd():
    params = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    indices = np.array([[1, 2], [0, 0], [1, 0]], dtype=np.int32)
    g = tf.gather_nd(params, indices)
    assert g.shape.as_list() == [3, 4]
    s = tf.scatter_nd(np.array([[4], [3], [1], [4]]), [9.0, 10.0, 11.0, 12.0], [6])
    got_g, got_s = run(g, s)
    np.testing.assert_array_equal(got_g, params[indices[:, 0], indices[:, 1]])
    np.testing.assert_array_equal(got_s, [0, 11, 0, 10, 21, 0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not index into param shape"):
        run(tf.gather_nd(params, [[2, 0]]))


def test_gather_nd_gradient_is_a_scatter():
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = tf.gather_nd(x, [[1, 2], [1, 2], [0, 0]])
    (grad,) = run(tf.gradients(tf.reduce_sum(y * y), x)[0])
    np.testing.assert_allclose(grad, [[0, 0, 0], [0, 0, 20]])


def test_top_k_matches_numpy_and_breaks_ties_by_index():
    x = np.array([[1, 5, 3, 5, 2], [9, 0, 4, 4, 1]], dtype=np.float32)
    values, indices = tf.nn.top_k(x, k=3)
    assert values.shape.as_list() == [2, 3]
    v, i = run(values, indices)
    np.testing.assert_array_equal(i, [[1, 3, 2], [0, 2, 3]])
    np.testing.assert_array_equal(v, np.take_along_axis(x, i, axis=1))
    assert i.dtype == np.int32
    values, _ = tf.math.top_k(x, 1)
    np.testing.assert_array_equal(run(values)[0], [[5], [9]])


def test_argmin_segment_sums_and_boolean_mask():
    x = np.array([[3, 1, 1], [0, 5, 0]], dtype=np.float32)
    data = np.arange(8, dtype=np.float32).reshape(4, 2)
    mask = np.array([True, False, True])
    m2 = np.array([[True, False], [False, True], [True, True]])
    t = np.arange(12).reshape(2, 3, 2)
    out = run(tf.argmin(x, axis=1), tf.argmin(x, 0, output_type=tf.int32),
              tf.segment_sum(data, [0, 0, 2, 2]),
              tf.unsorted_segment_sum(data, [1, 0, 1, 3], 4),
              tf.boolean_mask(np.arange(6).reshape(3, 2), mask),
              tf.boolean_mask(np.arange(6).reshape(3, 2), m2),
              tf.boolean_mask(t, mask, axis=1))
    np.testing.assert_array_equal(out[0], [1, 0])
    assert out[1].dtype == np.int32
    np.testing.assert_array_equal(out[1], [1, 0, 1])
    np.testing.assert_array_equal(out[2], [[2, 4], [0, 0], [10, 12]])
    np.testing.assert_array_equal(out[3], [[2, 3], [4, 6], [0, 0], [6, 7]])
    np.testing.assert_array_equal(out[4], np.arange(6).reshape(3, 2)[mask])
    np.testing.assert_array_equal(out[5], np.arange(6).reshape(3, 2)[m2])
    np.testing.assert_array_equal(out[6], t[:, mask])
    with pytest.raises(tf.errors.InvalidArgumentError, match="segment ids are not increasing"):
        run(tf.segment_sum(data, [0, 2, 1, 3]))


SCATTERS = [("scatter_update", lambda a, b: b), ("scatter_add", np.add),
            ("scatter_sub", np.subtract), ("scatter_mul", np.multiply),
            ("scatter_div", np.divide), ("scatter_max", np.maximum),
            ("scatter_min", np.minimum)]


def expected(fn, start, indices, updates):
    want = start.copy()
    for i, u in zip(indices, updates):
        want[i] = fn(want[i], u)
    return want


@pytest.mark.parametrize("name,fn", SCATTERS)
def test_scatter_updates_a_variable(name, fn):
    start = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)
    v = tf.Variable(start)
    updates = np.array([[2, 2], [0.5, 8], [4, 1]], dtype=np.float32)
    out = getattr(tf, name)(v, [2, 0, 2], updates)
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_allclose(sess.run(out), expected(fn, start, [2, 0, 2], updates))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = 3 is not in"):
            sess.run(getattr(tf, name)(v, [3], updates[:1]))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_scatter_ops_update_a_ps_variable_of_a_local_cluster():
    cluster = {"ps": ["127.0.0.1:%d" % free_port()],
               "worker": ["127.0.0.1:%d" % free_port()]}
    ps = tf.train.Server(cluster, job_name="ps", task_index=0)
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    try:
        with tf.device(tf.train.replica_device_setter(cluster=cluster)):
            v = tf.Variable(np.ones([4], dtype=np.float32))
            sub = tf.scatter_sub(v, [1, 3], [0.5, 2.0])
            mx = tf.scatter_max(v, [0], [7.0])
        assert v.device == "/job:ps/task:0"
        with tf.Session(worker.target) as sess:
            sess.run(v.initializer)
            sess.run([sub.op])
            sess.run(mx.op)
            np.testing.assert_allclose(sess.run(v), [7, 0.5, 1, -1])
    finally:
        worker.stop()
        ps.stop()


def test_check_numerics():
    x = tf.placeholder(tf.float32)
    checked = tf.check_numerics(x, "bad x")
    assert run(checked, feed_dict={x: 2.0})[0] == 2.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad x : Tensor had NaN values"):
        run(checked, feed_dict={x: np.nan})


def test_assert_fails_with_its_data_and_gates_control_dependencies():
    x = tf.placeholder(tf.float32, [None])
    check = tf.Assert(tf.reduce_min(x) > 0, ["x must be positive:", x], summarize=2)
    with tf.control_dependencies([check]):
        y = tf.identity(x * 2)
    np.testing.assert_array_equal(run(y, feed_dict={x: [1, 2]})[0], [2, 4])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"assertion failed: \[x must be positive:\] \[1 -2\.\.\.\]"):
        run(y, feed_dict={x: [1, -2, 3]})


def test_debugging_asserts_compose_from_assert():
    x = tf.placeholder(tf.int32, [None])
    checks = {"equal": tf.assert_equal(x, [1, 2]), "less": tf.assert_less(x, 3),
              "greater": tf.debugging.assert_greater(x, 0),
              "non_negative": tf.assert_non_negative(x), "positive": tf.assert_positive(x)}
    with tf.Session() as sess:
        sess.run(list(checks.values()), feed_dict={x: [1, 2]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Condition x == y did not hold element-wise:\] "
                                 r"\[x \(Placeholder:0\) = \] \[1 5\]"):
            sess.run(checks["equal"], feed_dict={x: [1, 5]})
        for name, bad in [("less", [1, 3]), ("greater", [0, 1]), ("non_negative", [-1, 1]),
                          ("positive", [0, 1])]:
            with pytest.raises(tf.errors.InvalidArgumentError, match="assertion failed"):
                sess.run(checks[name], feed_dict={x: bad})
    with pytest.raises(ValueError, match="must have rank 2"):
        tf.assert_rank(tf.constant([1, 2]), 2)
    y = tf.placeholder(tf.float32)
    rank_check = tf.assert_rank(y, 1)
    with tf.Session() as sess:
        sess.run(rank_check, feed_dict={y: [1.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="must have rank"):
            sess.run(rank_check, feed_dict={y: 1.0})


def test_print_passes_its_input_through(capfd):
    x = tf.constant([1.0, 2.0])
    p = tf.Print(x, [x, tf.constant([1, 2, 3, 4])], message="x is ", summarize=3)
    np.testing.assert_array_equal(run(p)[0], [1, 2])
    assert "x is [1 2][1 2 3...]" in capfd.readouterr().err


def test_names_are_no_longer_coming():
    for name in ["gather_nd", "scatter_nd", "argmin", "segment_sum",
                 "unsorted_segment_sum", "boolean_mask", "scatter_sub", "check_numerics",
                 "Assert", "Print", "assert_equal"]:
        assert callable(getattr(tf, name)), name
    assert callable(tf.nn.top_k) and callable(tf.math.top_k)
    assert callable(tf.debugging.assert_equal) and callable(tf.print)


def test_tf_print_writes_tensors_as_tf_print_does(capfd):
    x = tf.constant([[1, 2], [3, 4]])
    op = tf.print("x:", x, {"a": 1}, tf.constant(np.arange(10)), summarize=2)
    assert isinstance(op, tf.Operation)
    run(op)
    assert capfd.readouterr().err == "x: [[1 2]\n [3 4]] {'a': 1} [0 1 ... 8 9]\n"
    with tf.control_dependencies([tf.print("done", output_stream=__import__("sys").stdout,
                                           end="!")]):
        y = tf.identity(1.0)
    run(y)
    assert capfd.readouterr().out == "done!"


def test_assert_equal_on_two_differing_constants_fails_at_once():
    with pytest.raises(tf.errors.InvalidArgumentError, match="fail"):
        tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]), message="fail")
    same = tf.assert_equal(tf.constant([1, 2]), [1, 2])
    assert isinstance(same, tf.Operation)
    run(same)


def test_gradients_of_top_k_segment_sum_and_scatter_nd():
    x = tf.constant([[1.0, 5.0, 3.0], [9.0, 0.0, 4.0]])
    values, _ = tf.nn.top_k(x, 2)
    data = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    seg = tf.segment_sum(data, [0, 0, 1])
    upd = tf.constant([2.0, 3.0])
    scattered = tf.scatter_nd([[1], [1]], upd, [3])
    grads = tf.gradients(tf.reduce_sum(values * [[1.0, 2.0], [3.0, 4.0]]), x) + \
        tf.gradients(tf.reduce_sum(seg * [[1.0, 2.0], [3.0, 4.0]]), data) + \
        tf.gradients(tf.reduce_sum(scattered * [1.0, 5.0, 7.0]), upd)
    gx, gdata, gupd = run(*grads)
    np.testing.assert_allclose(gx, [[0, 1, 2], [3, 0, 4]])
    np.testing.assert_allclose(gdata, [[1, 2], [1, 2], [3, 4]])
    np.testing.assert_allclose(gupd, [5, 5])


def test_unique_in_order_of_first_appearance():
    x = np.array([4, 1, 4, 7, 1, 1, 9], dtype=np.int64)
    y, idx = tf.unique(x, out_idx=tf.int64)
    assert y.shape.as_list() == [None] and idx.shape.as_list() == [7]
    assert idx.dtype == tf.int64
    yv, iv = run(y, idx)
    np.testing.assert_array_equal(yv, [4, 1, 7, 9])
    np.testing.assert_array_equal(yv[iv], x)
    words = tf.unique(tf.constant([b"b", b"a", b"b"]))
    assert run(words.y)[0].tolist() == [b"b", b"a"]
    assert tf.math.unique is tf.unique
    with pytest.raises(ValueError, match="rank 1"):
        tf.unique(tf.zeros([2, 2]))


def test_strided_slice_with_every_mask_matches_numpy():
    x = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)
    cases = [
        (dict(begin=[1, 0, 0], end=[3, 5, 6], strides=[1, 2, 1]), x[1:3, 0:5:2, 0:6]),
        (dict(begin=[0, 4, 5], end=[0, 0, 0], strides=[1, -1, -2], begin_mask=1, end_mask=7),
         x[:, 4::-1, 5::-2]),
        (dict(begin=[2, 1], end=[3, 2], strides=[1, 1], shrink_axis_mask=1), x[2, 1:2]),
        (dict(begin=[0, 1], end=[0, 3], strides=[1, 1], ellipsis_mask=1), x[..., 1:3]),
        (dict(begin=[0, 1], end=[0, 2], strides=[1, 1], new_axis_mask=1), x[np.newaxis, 1:2]),
    ]
    for kwargs, want in cases:
        got = tf.strided_slice(x, **kwargs)
        assert got.shape.as_list() == list(want.shape), kwargs
        np.testing.assert_array_equal(run(got)[0], want)
    # strides default to ones; tensors work as bounds
    begin = tf.placeholder(tf.int32, [3])
    got = tf.strided_slice(x, begin, [4, 5, 6])
    np.testing.assert_array_equal(run(got, feed_dict={begin: [1, 2, 3]})[0], x[1:, 2:, 3:])
