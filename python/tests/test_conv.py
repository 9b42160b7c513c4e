"""tf.nn's convolutions and pools and tf.layers' conv2d, pooling and flatten over the C++
ops: values against numpy written here, TF's static shapes and variable names, TF's errors,
and a small convolutional network that learns."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


def numpy_conv(x, f, stride, top, left, out_h, out_w):
    n, h, w, _ = x.shape
    kh, kw, _, o = f.shape
    out = np.zeros((n, out_h, out_w, o))
    for i in range(out_h):
        for j in range(out_w):
            for a in range(kh):
                for b in range(kw):
                    r, c = i * stride - top + a, j * stride - left + b
                    if 0 <= r < h and 0 <= c < w:
                        out[:, i, j, :] += x[:, r, c, :] @ f[a, b]
    return out


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def test_conv2d_matches_numpy_with_tfs_static_shape():
    rng = np.random.RandomState(0)
    x = rng.randn(2, 7, 6, 3)
    f = rng.randn(3, 3, 3, 4)
    same = tf.nn.conv2d(tf.constant(x), tf.constant(f), strides=[1, 2, 2, 1], padding="SAME")
    valid = tf.nn.conv2d(tf.constant(x), tf.constant(f), strides=1, padding="VALID")
    padded = tf.nn.conv2d(tf.constant(x), tf.constant(f), strides=[1, 1, 1, 1],
                          padding=[[0, 0], [1, 0], [2, 1], [0, 0]])
    assert same.shape.as_list() == [2, 4, 3, 4]
    assert valid.shape.as_list() == [2, 5, 4, 4]
    assert padded.shape.as_list() == [2, 6, 7, 4]
    with tf.Session() as sess:
        got_same, got_valid, got_padded = sess.run([same, valid, padded])
    # SAME, stride 2: 7 rows need (4-1)*2+3-7 = 2 of padding (1 on top), 6 columns 1 (0 left).
    np.testing.assert_allclose(got_same, numpy_conv(x, f, 2, 1, 0, 4, 3), rtol=1e-10)
    np.testing.assert_allclose(got_valid, numpy_conv(x, f, 1, 0, 0, 5, 4), rtol=1e-10)
    np.testing.assert_allclose(got_padded, numpy_conv(x, f, 1, 1, 2, 6, 7), rtol=1e-10)


def test_pools_match_numpy():
    x = np.arange(2 * 4 * 4 * 3, dtype=np.float32).reshape(2, 4, 4, 3) * -1
    mx = tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
    avg = tf.nn.avg_pool(x, ksize=2, strides=2, padding="SAME")
    with tf.Session() as sess:
        got_max, got_avg = sess.run([mx, avg])
    blocks = x.reshape(2, 2, 2, 2, 2, 3)
    np.testing.assert_array_equal(got_max, blocks.max(axis=(2, 4)))
    np.testing.assert_allclose(got_avg, blocks.mean(axis=(2, 4)))


def test_gradients_flow_through_convolutions_and_pools():
    x = tf.constant(np.random.RandomState(1).randn(1, 6, 6, 2))
    f = tf.constant(np.random.RandomState(2).randn(3, 3, 2, 2))
    y = tf.nn.max_pool(tf.nn.conv2d(x, f, strides=1, padding="SAME"), 2, 2, "VALID")
    dx, df = tf.gradients(tf.reduce_sum(tf.square(y)), [x, f])
    assert dx.shape.as_list() == [1, 6, 6, 2] and df.shape.as_list() == [3, 3, 2, 2]
    with tf.Session() as sess:
        got_df, fv, xv = sess.run([df, f, x])
    # Central differences of the same function in numpy, for one filter entry.
    def loss(filt):
        conv = numpy_conv(xv, filt, 1, 1, 1, 6, 6)
        return np.sum(conv.reshape(1, 3, 2, 3, 2, 2).max(axis=(2, 4)) ** 2)
    step = np.zeros_like(fv)
    step[1, 2, 0, 1] = 1e-6
    numeric = (loss(fv + step) - loss(fv - step)) / 2e-6
    assert got_df[1, 2, 0, 1] == pytest.approx(numeric, rel=1e-5)


def test_conv2d_transpose_inverts_the_shape():
    value = tf.zeros([2, 4, 4, 8])
    filt = tf.zeros([3, 3, 5, 8])
    y = tf.nn.conv2d_transpose(value, filt, output_shape=[2, 8, 8, 5], strides=[1, 2, 2, 1])
    with tf.Session() as sess:
        assert sess.run(y).shape == (2, 8, 8, 5)


def test_layers_name_variables_as_tf_does():
    images = tf.placeholder(tf.float32, [None, 28, 28, 1])
    h = tf.layers.conv2d(images, 8, 5, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.conv2d(h, 16, (3, 3))
    h = tf.layers.average_pooling2d(h, pool_size=2, strides=2, padding="same")
    flat = tf.layers.flatten(h)
    assert h.shape.as_list() == [None, 6, 6, 16]
    assert flat.shape.as_list() == [None, 576]
    shapes = {v.op.name: v.shape.as_list() for v in tf.trainable_variables()}
    assert shapes == {"conv2d/kernel": [5, 5, 1, 8], "conv2d/bias": [8],
                      "conv2d_1/kernel": [3, 3, 8, 16], "conv2d_1/bias": [16]}


def test_layer_objects_reuse_their_variables():
    conv = tf.keras.layers.Conv2D(4, 3, strides=2, padding="same", name="features")
    a = conv(tf.zeros([1, 8, 8, 2]))
    b = conv(tf.ones([1, 8, 8, 2]))
    assert a.shape.as_list() == b.shape.as_list() == [1, 4, 4, 4]
    assert [v.op.name for v in conv.weights] == ["features/kernel", "features/bias"]
    assert len(tf.trainable_variables()) == 2
    pooled = tf.keras.layers.MaxPooling2D(2)(a)
    assert tf.keras.layers.Flatten()(pooled).shape.as_list() == [1, 16]


def test_tfs_errors():
    # As TF on CPU: an NCHW graph builds, and its step fails.
    nchw = tf.nn.conv2d(tf.zeros([1, 3, 4, 4]), tf.zeros([2, 2, 3, 1]), strides=1,
                        padding="SAME", data_format="NCHW")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Generic conv implementation only supports NHWC"):
            sess.run(nchw)
    # Shape errors are found when the graph is built, as TF's shape functions find them.
    with pytest.raises(ValueError, match="Depth of input"):
        tf.nn.conv2d(tf.zeros([1, 4, 4, 2]), tf.zeros([2, 2, 3, 1]), strides=1,
                     padding="VALID")
    with pytest.raises(ValueError, match="only 'channels_last'"):
        tf.layers.conv2d(tf.zeros([1, 4, 4, 2]), 2, 2, data_format="channels_first")


def test_a_small_convolutional_network_learns():
    # Is the bright pixel in the left or the right half of an 8x8 image?
    rng = np.random.RandomState(3)
    images = rng.rand(256, 8, 8, 1).astype(np.float32) * 0.1
    labels = rng.randint(0, 2, size=256)
    cols = np.where(labels == 0, rng.randint(0, 4, 256), rng.randint(4, 8, 256))
    images[np.arange(256), rng.randint(0, 8, 256), cols, 0] = 1.0
    x = tf.placeholder(tf.float32, [None, 8, 8, 1])
    y = tf.placeholder(tf.int32, [None])
    tf.set_random_seed(1)
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    logits = tf.layers.dense(tf.layers.flatten(h), 2)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.cast(tf.argmax(logits, 1), tf.int32), y),
                                      tf.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(150):
            sess.run(train, {x: images, y: labels})
        assert sess.run(accuracy, {x: images, y: labels}) > 0.95
