"""tf.gradients against numeric derivatives, sparse gradients through gather, and the
gradient nodes as Python operations."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


def numeric_gradient(f, x, eps=1e-3):
    grad = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


def test_dense_gradients_match_numeric_ones():
    rng = np.random.RandomState(0)
    x_value = rng.randn(4, 3)
    w_value = rng.randn(3, 2)
    labels = np.array([0, 1, 1, 0], dtype=np.int64)
    x = tf.placeholder(tf.float64, shape=[4, 3])
    w = tf.placeholder(tf.float64, shape=[3, 2])
    b = tf.constant([0.1, -0.2], dtype=tf.float64)
    logits = tf.matmul(tf.nn.relu(x), w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits)) + tf.reduce_sum(tf.square(w)) * 0.01
    gx, gw = tf.gradients(loss, [x, w])
    with tf.Session() as s:
        got_x, got_w = s.run([gx, gw], {x: x_value, w: w_value})

        def f_w(value):
            return s.run(loss, {x: x_value, w: value})

        def f_x(value):
            return s.run(loss, {x: value, w: w_value})

        np.testing.assert_allclose(got_w, numeric_gradient(f_w, w_value), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(got_x, numeric_gradient(f_x, x_value), rtol=1e-5, atol=1e-7)


def test_gradients_through_gather_are_indexed_slices_and_variables_are_xs():
    w = tf.Variable(np.ones((4, 2), np.float32), name="w")
    loss = tf.reduce_sum(tf.gather(w, [1, 1, 3]) * 3.0)
    (grad,) = tf.gradients(loss, [w])
    assert isinstance(grad, tf.IndexedSlices)
    with tf.Session() as s:
        s.run(w.initializer)
        indices, values, dense_shape = s.run([grad.indices, grad.values, grad.dense_shape])
    dense = np.zeros((4, 2), np.float32)
    np.add.at(dense, indices, values)
    np.testing.assert_array_equal(dense, [[0, 0], [6, 6], [0, 0], [3, 3]])
    np.testing.assert_array_equal(dense_shape, [4, 2])


def test_unconnected_xs_get_none_and_grad_ys_seed():
    x = tf.constant([1.0, 2.0])
    y = x * x
    assert tf.gradients(y, [tf.constant(3.0)]) == [None]
    (g,) = tf.gradients(y, [x], grad_ys=[tf.constant([10.0, 1.0])])
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(g), [20.0, 4.0])


def test_gradient_nodes_are_operations_of_the_graph():
    x = tf.placeholder(tf.float32, shape=[2])
    y = tf.reduce_sum(tf.exp(x))
    (g,) = tf.gradients(y, x)
    assert g.op.name.startswith("gradients/")
    assert tf.get_default_graph().get_operation_by_name(g.op.name) is g.op
    (g2,) = tf.gradients(y, x)
    assert g2.op.name.startswith("gradients_1/")
    with tf.name_scope("gradients") as scope:
        assert scope not in ("gradients/", "gradients_1/")  # names and scopes are one namespace
    z = g * 2.0  # gradient tensors are inputs like any other
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(z, {x: [0.0, 1.0]}), 2 * np.exp([0.0, 1.0]),
                                   rtol=1e-6)


def test_an_op_without_a_gradient_on_the_path_is_an_error():
    x = tf.placeholder(tf.float32, shape=[3])
    y = tf.reduce_sum(tf.cast(tf.argmax(tf.reshape(x, [1, 3]), axis=1), tf.float32) * x)
    # ArgMax ends its path (no gradient, as in TF); the other path still has one.
    (g,) = tf.gradients(y, [x])
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(g, {x: [1.0, 5.0, 2.0]}), [1.0, 1.0, 1.0])
    with pytest.raises(ValueError):
        tf.gradients([tf.constant(1)], [x], grad_ys=[1, 2])


def test_stop_gradient_passes_its_value_and_ends_the_path():
    x = tf.placeholder(tf.float32, [3])
    stopped = tf.stop_gradient(x)
    dx, = tf.gradients(x * stopped, [x])  # d(x * stop(x))/dx = stop(x) = x
    none, = tf.gradients(stopped, [x])
    assert none is None
    with tf.Session() as sess:
        value, grad = sess.run([stopped, dx], {x: [1.0, 5.0, 2.0]})
    assert value.tolist() == [1.0, 5.0, 2.0]
    assert grad.tolist() == [1.0, 5.0, 2.0]


def test_a_finalized_graph_refuses_gradients_and_optimizers_too():
    x = tf.Variable(1.0, name="x")
    loss = x * x
    tf.get_default_graph().finalize()
    with pytest.raises(RuntimeError, match="Graph is finalized"):
        tf.gradients(loss, [x])
    with pytest.raises(RuntimeError, match="Graph is finalized"):
        tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    assert [op.name for op in tf.get_default_graph().get_operations()
            if op.name.startswith("gradients")] == []
