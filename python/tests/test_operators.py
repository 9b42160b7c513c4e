"""The Tensor operators and the functions over the runtime's comparison, logical and
reduction kernels, computing what TF 1.x computes; report_uninitialized_variables."""

import numpy as np

import tensorweave.compat.v1 as tf


def test_operators_compute_as_tf():
    a = tf.constant([7, -7, 6])
    b = tf.constant([2, 2, -4])
    f = tf.constant([1.5, -2.0])
    t = tf.constant([True, True, False])
    u = tf.constant([True, False, False])
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(a // b), [3, -4, -2])  # floors
        np.testing.assert_array_equal(s.run(a % b), [1, 1, -2])  # the divisor's sign
        np.testing.assert_array_equal(s.run(a ** 2), [49, 49, 36])
        np.testing.assert_allclose(s.run(f ** 2.0), [2.25, 4.0])
        np.testing.assert_array_equal(s.run(a <= 6), [False, True, True])
        np.testing.assert_array_equal(s.run(a >= 6), [True, False, True])
        np.testing.assert_array_equal(s.run(abs(a)), [7, 7, 6])
        np.testing.assert_array_equal(s.run(t & u), [True, False, False])
        np.testing.assert_array_equal(s.run(t | u), [True, True, False])
        np.testing.assert_array_equal(s.run(t ^ u), [False, True, False])
        np.testing.assert_array_equal(s.run(~t), [False, False, True])
        np.testing.assert_array_equal(s.run(tf.not_equal(a, 7)), [False, True, True])
        np.testing.assert_array_equal(s.run(10 // a), [1, -2, 1])
    for op in ((a // b).op, (a % b).op, (a <= b).op, (t & u).op):
        assert op.type in ("FloorDiv", "FloorMod", "LessEqual", "LogicalAnd")


def test_reductions_min_and_prod():
    x = tf.constant([[1.0, -2.0], [3.0, 4.0]])
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(tf.reduce_min(x, axis=1)), [-2.0, 3.0])
        np.testing.assert_allclose(s.run(tf.reduce_prod(x)), -24.0)
        np.testing.assert_allclose(s.run(tf.reduce_prod(x, axis=0, keepdims=True)),
                                   [[3.0, -8.0]])


def test_report_uninitialized_variables_names_them():
    w = tf.Variable(1.0, name="w")
    b = tf.Variable(2.0, name="b")
    report = tf.report_uninitialized_variables()
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(report), np.array([b"w", b"b"], dtype=object))
        s.run(w.initializer)
        np.testing.assert_array_equal(s.run(report), np.array([b"b"], dtype=object))
        s.run(b.initializer)
        assert s.run(report).shape == (0,)


def test_queue_is_closed():
    q = tf.FIFOQueue(1, [tf.int32])
    closed = q.is_closed()
    with tf.Session() as s:
        assert not s.run(closed)
        s.run(q.close())
        assert s.run(closed)


def test_where_gives_indices_or_picks():
    c = tf.constant([[True, False], [False, True]])
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(tf.where(c)), [[0, 0], [1, 1]])
        np.testing.assert_array_equal(s.run(tf.where(c, tf.ones([2, 2]), tf.zeros([2, 2]))),
                                      [[1.0, 0.0], [0.0, 1.0]])
