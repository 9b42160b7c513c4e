"""tf.contrib.layers / slim: TF's variable names, arg_scope, initializers and regularizers."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf

slim = tf.contrib.slim


def test_fully_connected_and_conv2d_make_tf_named_model_variables():
    with tf.Graph().as_default():
        images = tf.placeholder(tf.float32, [None, 8, 8, 3])
        net = tf.contrib.layers.conv2d(images, 4, [3, 3])
        net = tf.contrib.layers.max_pool2d(net, [2, 2])
        assert net.shape.as_list() == [None, 4, 4, 4]
        net = tf.contrib.layers.conv2d(net, 5, 3, stride=2, padding="VALID")
        net = tf.contrib.layers.flatten(net)
        logits = tf.contrib.layers.fully_connected(net, 10, activation_fn=None)
        assert logits.shape.as_list() == [None, 10]
        names = [v.op.name for v in tf.global_variables()]
        assert names == ["Conv/weights", "Conv/biases", "Conv_1/weights", "Conv_1/biases",
                         "fully_connected/weights", "fully_connected/biases"]
        assert [v.op.name for v in tf.model_variables()] == names
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = sess.run(logits, {images: np.ones([2, 8, 8, 3], np.float32)})
            assert out.shape == (2, 10)


def test_fully_connected_computes_relu_of_xw_plus_b():
    with tf.Graph().as_default():
        x = tf.constant([[1.0, -2.0], [0.5, 3.0]])
        y = tf.contrib.layers.fully_connected(
            x, 3, weights_initializer=tf.constant_initializer(0.5),
            biases_initializer=tf.constant_initializer(-1.0))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            expected = np.maximum(np.array([[1.0, -2.0], [0.5, 3.0]]) @ np.full((2, 3), 0.5)
                                  - 1.0, 0)
            np.testing.assert_allclose(sess.run(y), expected, rtol=1e-6)


def test_arg_scope_sets_defaults_nests_and_yields_a_reusable_scope():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        with slim.arg_scope([slim.fully_connected], activation_fn=None,
                            weights_regularizer=slim.l2_regularizer(0.1)) as outer:
            with slim.arg_scope([slim.fully_connected], activation_fn=tf.nn.relu):
                inner = slim.fully_connected(x, 2, scope="inner")
            a = slim.fully_connected(x, 2, scope="a")
            b = slim.fully_connected(x, 2, activation_fn=tf.nn.relu, scope="b")
        with slim.arg_scope(outer):
            c = slim.fully_connected(x, 2, scope="c")
        assert inner.op.type == "Relu" and b.op.type == "Relu"
        assert a.op.type == "BiasAdd" and c.op.type == "BiasAdd"
        # Each layer's weights were regularized through the scope.
        assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 4
    with pytest.raises(ValueError, match="not decorated with @add_arg_scope"):
        with slim.arg_scope([len], x=1):
            pass


def test_regularizers_and_apply_regularization():
    with tf.Graph().as_default():
        w = tf.constant([[1.0, -2.0], [3.0, 0.5]])
        l2 = tf.contrib.layers.l2_regularizer(0.1)(w)
        l1 = tf.contrib.layers.l1_regularizer(0.5)(w)
        assert tf.contrib.layers.l2_regularizer(0.0)(w) is None
        total = tf.contrib.layers.apply_regularization(tf.contrib.layers.l1_regularizer(1.0),
                                                       [w])
        with tf.Session() as sess:
            got = sess.run([l2, l1, total])
        np.testing.assert_allclose(got, [0.1 * 14.25 / 2, 0.5 * 6.5, 6.5], rtol=1e-6)
        assert total in tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    with pytest.raises(ValueError, match="scale cannot be an integer"):
        tf.contrib.layers.l2_regularizer(1)
    with pytest.raises(ValueError, match="less than 0"):
        tf.contrib.layers.l2_regularizer(-0.1)


def test_initializers_use_contribs_formulas():
    n_in, n_out = 200, 300
    with tf.Graph().as_default():
        xavier = tf.contrib.layers.xavier_initializer(seed=1)([n_in, n_out])
        he = tf.contrib.layers.variance_scaling_initializer(seed=2)([n_in, n_out])
        with tf.Session() as sess:
            x, h = sess.run([xavier, he])
    limit = np.sqrt(6.0 / (n_in + n_out))
    assert np.abs(x).max() <= limit and np.abs(x).max() > 0.95 * limit
    assert np.std(x) == pytest.approx(limit / np.sqrt(3), rel=0.05)
    # A normal truncated at 2 stddevs of sqrt(1.3 * 2 / fan_in): its own std is 0.88 of that.
    stddev = np.sqrt(1.3 * 2.0 / n_in)
    assert np.abs(h).max() <= 2 * stddev + 1e-6
    assert np.std(h) == pytest.approx(0.8796 * stddev, rel=0.05)
    with pytest.raises(TypeError, match="Unknown mode"):
        tf.contrib.layers.variance_scaling_initializer(mode="fan_in")


def test_batch_norm_names_and_update_ops():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.contrib.layers.batch_norm(x, decay=0.5, is_training=True)
        names = sorted(v.op.name for v in tf.global_variables())
        assert names == ["BatchNorm/beta", "BatchNorm/moving_mean", "BatchNorm/moving_variance"]
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        assert len(updates) == 2
        batch = np.array([[1.0, 2.0, 3.0], [3.0, 6.0, 9.0]], np.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out, _ = sess.run([y, updates], {x: batch})
            moving_mean, = [v for v in tf.global_variables()
                            if v.op.name == "BatchNorm/moving_mean"]
            mean = sess.run(moving_mean)
        normalized = (batch - batch.mean(0)) / np.sqrt(batch.var(0) + 0.001)
        np.testing.assert_allclose(out, normalized, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(mean, 0.5 * batch.mean(0), rtol=1e-5)


def test_dropout_is_identity_when_not_training():
    with tf.Graph().as_default():
        x = tf.ones([4, 5])
        kept = tf.contrib.layers.dropout(x, keep_prob=0.5, is_training=False)
        dropped = tf.contrib.layers.dropout(x, keep_prob=0.5, is_training=True, seed=3)
        with tf.Session() as sess:
            k, d = sess.run([kept, dropped])
        np.testing.assert_array_equal(k, np.ones([4, 5]))
        assert set(np.unique(d)) <= {0.0, 2.0}
