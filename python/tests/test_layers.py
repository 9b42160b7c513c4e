"""The Dense layer object (tf.layers.Dense, tf.keras.layers.Dense in graph mode): variables
made at the first call, reused by later ones."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


def test_dense_layer_makes_its_variables_once_and_reuses_them():
    layer = tf.keras.layers.Dense(3, activation="relu",
                                  kernel_initializer=tf.constant_initializer(0.5),
                                  bias_initializer=tf.constant_initializer(-1.0))
    a = tf.constant(np.ones((2, 4), np.float32))
    b = tf.constant(np.full((1, 4), 2.0, np.float32))
    ya, yb = layer(a), layer(b)
    assert layer.name == "dense"
    assert [v.op.name for v in layer.weights] == ["dense/kernel", "dense/bias"]
    assert [v.op.name for v in tf.trainable_variables()] == ["dense/kernel", "dense/bias"]
    other = tf.layers.Dense(2)
    other(a)
    assert other.name == "dense_1" and other.kernel.shape.as_list() == [4, 2]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        # relu(4 * 0.5 - 1) = 1 and relu(8 * 0.5 - 1) = 3, through the same weights.
        np.testing.assert_allclose(sess.run(ya), np.ones((2, 3)))
        np.testing.assert_allclose(sess.run(yb), np.full((1, 3), 3.0))


def test_dense_layer_trains_and_refuses_an_unknown_last_dimension():
    layer = tf.layers.Dense(1, use_bias=False, kernel_initializer=tf.zeros_initializer())
    x = tf.constant([[1.0, 2.0]])
    loss = tf.reduce_sum(tf.square(layer(x) - 5.0))
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
    assert layer.bias is None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(100):
            sess.run(train)
        assert sess.run(loss) < 1e-3
    with pytest.raises(ValueError, match="last dimension of the inputs"):
        tf.layers.Dense(2)(tf.placeholder(tf.float32, [None, None]))
