"""tf.nn's batch normalization (fused_batch_norm, batch_normalization, moments, l2_normalize)
and tf.layers / tf.keras.layers' BatchNormalization over the C++ FusedBatchNormV3: values
against numpy written here, TF's variable names, the moving averages that UPDATE_OPS move,
and gradients against central differences."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def numpy_bn(x, mean, var, offset, scale, eps):
    return (x - mean) / np.sqrt(var + eps) * scale + offset


def test_fused_batch_norm_training_and_inference_match_numpy():
    rng = np.random.RandomState(0)
    x = rng.randn(3, 4, 5, 2).astype(np.float32) * 2 + 1
    scale = np.array([0.5, 2.0], np.float32)
    offset = np.array([0.1, -0.3], np.float32)
    y, mean, var = tf.nn.fused_batch_norm(tf.constant(x), scale, offset, epsilon=0.001)
    mean_in = np.array([0.2, -0.1], np.float32)
    var_in = np.array([1.5, 0.7], np.float32)
    y_inf, m_inf, v_inf = tf.nn.fused_batch_norm(tf.constant(x), scale, offset, mean=mean_in,
                                                 variance=var_in, is_training=False)
    assert y.shape.as_list() == [3, 4, 5, 2] and mean.shape.as_list() == [2]
    with tf.Session() as sess:
        got = sess.run([y, mean, var, y_inf, m_inf, v_inf])
    n = x.size // 2
    bm, bv = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))
    np.testing.assert_allclose(got[0], numpy_bn(x, bm, bv, offset, scale, 0.001), atol=1e-5)
    np.testing.assert_allclose(got[1], bm, rtol=1e-5)
    np.testing.assert_allclose(got[2], bv * n / (n - 1), rtol=1e-5)  # Bessel, as TF
    np.testing.assert_allclose(got[3], numpy_bn(x, mean_in, var_in, offset, scale, 0.001),
                               atol=1e-5)
    np.testing.assert_allclose(got[4], mean_in)
    np.testing.assert_allclose(got[5], var_in)


def test_fused_batch_norm_errors():
    x = tf.constant(np.zeros((1, 2, 2, 2), np.float32))
    with pytest.raises(ValueError, match="must be None if is_training is True"):
        tf.nn.fused_batch_norm(x, [1.0, 1.0], [0.0, 0.0], mean=[0.0, 0.0])
    with pytest.raises(ValueError, match="must be a 1D tensor when is_training is False"):
        tf.nn.fused_batch_norm(x, [1.0, 1.0], [0.0, 0.0], is_training=False)
    with pytest.raises(Exception, match="Dimensions must be equal, but are 2 and 3"):
        tf.nn.fused_batch_norm(x, [1.0, 1.0, 1.0], [0.0, 0.0, 0.0])


def test_batch_normalization_moments_and_l2_normalize_match_numpy():
    rng = np.random.RandomState(1)
    x = rng.randn(6, 3)
    mean, var = tf.nn.moments(tf.constant(x), axes=[0])
    mean_k, var_k = tf.nn.moments(tf.constant(x), axes=[0], keep_dims=True)
    y = tf.nn.batch_normalization(tf.constant(x), mean, var,
                                  offset=tf.constant([1.0, 2, 3], tf.float64),
                                  scale=tf.constant([0.5, 1, 2.0], tf.float64),
                                  variance_epsilon=1e-3)
    no_affine = tf.nn.batch_normalization(tf.constant(x), mean, var, None, None, 1e-3)
    unit = tf.nn.l2_normalize(tf.constant(x), axis=1)
    assert mean.shape.as_list() == [3] and mean_k.shape.as_list() == [1, 3]
    with tf.Session() as sess:
        m, v, mk, vk, got, plain, u = sess.run([mean, var, mean_k, var_k, y, no_affine, unit])
    np.testing.assert_allclose(m, x.mean(0))
    np.testing.assert_allclose(v, x.var(0))
    np.testing.assert_allclose(mk, x.mean(0, keepdims=True))
    np.testing.assert_allclose(vk, x.var(0, keepdims=True))
    np.testing.assert_allclose(got, numpy_bn(x, x.mean(0), x.var(0), [1, 2, 3], [0.5, 1, 2],
                                             1e-3))
    np.testing.assert_allclose(plain, numpy_bn(x, x.mean(0), x.var(0), 0, 1, 1e-3))
    np.testing.assert_allclose(u, x / np.linalg.norm(x, axis=1, keepdims=True))


def test_layer_variables_update_ops_and_moving_averages():
    rng = np.random.RandomState(2)
    x = rng.randn(4, 3, 3, 2).astype(np.float32) * 3 + 5
    inputs = tf.placeholder(tf.float32, [None, 3, 3, 2])
    train_out = tf.layers.batch_normalization(inputs, training=True)
    test_out = tf.layers.batch_normalization(inputs, training=False, name="batch_normalization",
                                             reuse=True)
    names = sorted(v.name for v in tf.global_variables())
    assert names == ["batch_normalization/beta:0", "batch_normalization/gamma:0",
                     "batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"]
    assert sorted(v.name for v in tf.trainable_variables()) == [
        "batch_normalization/beta:0", "batch_normalization/gamma:0"]
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(update_ops) == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(train_out, {inputs: x})
        np.testing.assert_allclose(
            got, numpy_bn(x, x.mean((0, 1, 2)), x.var((0, 1, 2)), 0, 1, 1e-3), atol=1e-4)
        sess.run(update_ops, {inputs: x})
        mm = sess.run("batch_normalization/moving_mean:0")
        mv = sess.run("batch_normalization/moving_variance:0")
        n = x.size // 2
        np.testing.assert_allclose(mm, 0.01 * x.mean((0, 1, 2)), rtol=1e-5)
        np.testing.assert_allclose(mv, 0.99 + 0.01 * x.var((0, 1, 2)) * n / (n - 1), rtol=1e-5)
        np.testing.assert_allclose(sess.run(test_out, {inputs: x}),
                                   numpy_bn(x, mm, mv, 0, 1, 1e-3), atol=1e-4)


def test_training_as_a_bool_tensor_and_the_composite_path():
    rng = np.random.RandomState(3)
    x = rng.randn(5, 4)
    training = tf.placeholder(tf.bool, [])
    layer = tf.layers.BatchNormalization(momentum=0.9, center=False)
    out = layer(tf.constant(x), training=training)
    assert [v.name for v in layer.weights] == ["batch_normalization/gamma:0",
                                               "batch_normalization/moving_mean:0",
                                               "batch_normalization/moving_variance:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(out, {training: False}),
                                   numpy_bn(x, 0, 1, 0, 1, 1e-3))
        sess.run(layer.updates, {training: False})  # decay 0: nothing moves
        np.testing.assert_allclose(sess.run(layer.moving_mean), np.zeros(4))
        np.testing.assert_allclose(sess.run(out, {training: True}),
                                   numpy_bn(x, x.mean(0), x.var(0), 0, 1, 1e-3))
        sess.run(layer.updates, {training: True})
        np.testing.assert_allclose(sess.run(layer.moving_mean), 0.1 * x.mean(0))
        np.testing.assert_allclose(sess.run(layer.moving_variance), 0.9 + 0.1 * x.var(0))


def test_keras_layer_keeps_its_updates_out_of_update_ops():
    layer = tf.keras.layers.BatchNormalization()
    layer(tf.constant(np.ones((2, 2, 2, 3), np.float32)), training=True)
    assert len(layer.updates) == 2
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []


def numeric_gradient(sess, y, x_ph, x0, delta=1e-6):
    grad = np.zeros_like(x0)
    for i in range(x0.size):
        step = np.zeros_like(x0)
        step.flat[i] = delta
        grad.flat[i] = (sess.run(y, {x_ph: x0 + step}) - sess.run(y, {x_ph: x0 - step})) / (
            2 * delta)
    return grad


@pytest.mark.parametrize("is_training", [True, False])
def test_fused_batch_norm_gradient_matches_central_differences(is_training):
    rng = np.random.RandomState(4)
    x0 = rng.randn(2, 2, 3, 2)
    weights = tf.constant(rng.randn(2, 2, 3, 2))
    x = tf.placeholder(tf.float64, [2, 2, 3, 2])
    scale = tf.constant([0.7, 1.3], tf.float64)
    offset = tf.constant([0.2, -0.4], tf.float64)
    stats = {} if is_training else {"mean": tf.constant([0.1, -0.2], tf.float64),
                                    "variance": tf.constant([0.8, 1.7], tf.float64)}
    y, _, _ = tf.nn.fused_batch_norm(x, scale, offset, is_training=is_training, **stats)
    loss = tf.reduce_sum(y * weights)
    (dx,) = tf.gradients(loss, [x])
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(dx, {x: x0}), numeric_gradient(sess, loss, x, x0),
                                   atol=1e-6)


def test_bias_add_nchw_and_its_gradient():
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 2, 2)
    b = np.array([10.0, 20.0, 30.0])
    value = tf.constant(x)
    bias = tf.constant(b)
    y = tf.nn.bias_add(value, bias, data_format="NCHW")
    y_last = tf.nn.bias_add(tf.constant(x.reshape(2, 2, 2, 3)), bias, data_format="NHWC")
    db = tf.gradients(tf.reduce_sum(y * y), [bias])[0]
    with tf.Session() as sess:
        got, last, grad = sess.run([y, y_last, db])
    np.testing.assert_allclose(got, x + b.reshape(1, 3, 1, 1))
    np.testing.assert_allclose(last, x.reshape(2, 2, 2, 3) + b)
    np.testing.assert_allclose(grad, (2 * (x + b.reshape(1, 3, 1, 1))).sum(axis=(0, 2, 3)))
    with pytest.raises(ValueError, match="data_format must be of the form"):
        tf.nn.bias_add(value, bias, data_format="CHWN")


def numpy_depthwise(x, f, stride, top, left, out_h, out_w, dilation=1):
    n, h, w, c = x.shape
    kh, kw, _, m = f.shape
    out = np.zeros((n, out_h, out_w, c * m))
    for i in range(out_h):
        for j in range(out_w):
            for a in range(kh):
                for b in range(kw):
                    r, col = i * stride - top + a * dilation, j * stride - left + b * dilation
                    if 0 <= r < h and 0 <= col < w:
                        out[:, i, j, :] += (x[:, r, col, :, None] * f[a, b]).reshape(n, c * m)
    return out


def test_depthwise_and_separable_conv2d_match_numpy():
    rng = np.random.RandomState(5)
    x = rng.randn(2, 6, 5, 3)
    f = rng.randn(3, 3, 3, 2)
    pw = rng.randn(1, 1, 6, 4)
    ft = tf.constant(f)
    same = tf.nn.depthwise_conv2d(tf.constant(x), ft, [1, 2, 2, 1], "SAME")
    valid = tf.nn.depthwise_conv2d_native(tf.constant(x), tf.constant(f), [1, 1, 1, 1], "VALID")
    dilated = tf.nn.depthwise_conv2d(tf.constant(x), tf.constant(f), [1, 1, 1, 1], "VALID",
                                     rate=[2, 1])
    sep = tf.nn.separable_conv2d(tf.constant(x), tf.constant(f), tf.constant(pw), [1, 1, 1, 1],
                                 "VALID")
    assert same.shape.as_list() == [2, 3, 3, 6]
    assert sep.shape.as_list() == [2, 4, 3, 4]
    df = tf.gradients(tf.reduce_sum(same), [ft])[0]
    with tf.Session() as sess:
        s, v, d, sp, grad = sess.run([same, valid, dilated, sep, df])
    np.testing.assert_allclose(s, numpy_depthwise(x, f, 2, 0, 1, 3, 3), atol=1e-12)
    np.testing.assert_allclose(v, numpy_depthwise(x, f, 1, 0, 0, 4, 3), atol=1e-12)
    want_d = np.zeros((2, 2, 3, 6))
    for i in range(2):
        for j in range(3):
            for a in range(3):
                for b in range(3):
                    want_d[:, i, j, :] += (x[:, i + 2 * a, j + b, :, None] * f[a, b]).reshape(2, 6)
    np.testing.assert_allclose(d, want_d, atol=1e-12)
    np.testing.assert_allclose(sp, numpy_depthwise(x, f, 1, 0, 0, 4, 3) @ pw[0, 0], atol=1e-12)
    # d sum(out) / d f[a, b, c, m]: the sum of the inputs each tap meets.
    want_grad = np.zeros_like(f)
    for a in range(3):
        for b in range(3):
            for i in range(3):
                for j in range(3):
                    r, col = 2 * i + a, 2 * j - 1 + b  # SAME: top 0, left 1
                    if 0 <= r < 6 and 0 <= col < 5:
                        want_grad[a, b] += x[:, r, col, :].sum(axis=0)[:, None]
    np.testing.assert_allclose(grad, want_grad, atol=1e-12)
    with pytest.raises(ValueError, match="strides > 1 not supported"):
        tf.nn.depthwise_conv2d(tf.constant(x), tf.constant(f), [1, 2, 2, 1], "SAME", rate=2)


def test_lrn_matches_numpy_and_has_a_gradient():
    rng = np.random.RandomState(6)
    x = rng.randn(2, 2, 3, 6)
    t = tf.constant(x)
    y = tf.nn.lrn(t, depth_radius=2, bias=2.0, alpha=0.5, beta=0.75)
    same = tf.nn.local_response_normalization(t)
    grad = tf.gradients(tf.reduce_sum(y), [t])[0]
    with tf.Session() as sess:
        got, default, g = sess.run([y, same, grad])
    sq = x * x
    sums = np.stack([sq[..., max(0, d - 2):d + 3].sum(-1) for d in range(6)], axis=-1)
    np.testing.assert_allclose(got, x / (2.0 + 0.5 * sums) ** 0.75, rtol=1e-12)
    all_sums = np.stack([sq[..., max(0, d - 5):d + 6].sum(-1) for d in range(6)], axis=-1)
    np.testing.assert_allclose(default, x / np.sqrt(1.0 + all_sums), rtol=1e-12)
    assert g.shape == x.shape


def test_layer_over_axis_1_and_the_unfused_path_agree_with_numpy():
    rng = np.random.RandomState(7)
    x = rng.randn(3, 4, 2, 5).astype(np.float32)
    nchw = tf.layers.batch_normalization(tf.constant(x), axis=1, training=True, name="nchw")
    unfused = tf.layers.batch_normalization(tf.constant(x), axis=1, training=True, fused=False,
                                            name="unfused")
    ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(ops) == 4
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b = sess.run([nchw, unfused])
        sess.run(ops)
        fused_var = sess.run("nchw/moving_variance:0")
        plain_var = sess.run("unfused/moving_variance:0")
    mean = x.mean(axis=(0, 2, 3)).reshape(1, 4, 1, 1)
    var = x.var(axis=(0, 2, 3)).reshape(1, 4, 1, 1)
    want = (x - mean) / np.sqrt(var + 1e-3)
    np.testing.assert_allclose(a, want, atol=1e-5)
    np.testing.assert_allclose(b, want, atol=1e-5)
    n = x.size // 4
    # The fused path follows the Bessel-corrected variance, the composite one the biased.
    np.testing.assert_allclose(fused_var, 0.99 + 0.01 * var.ravel() * n / (n - 1), rtol=1e-5)
    np.testing.assert_allclose(plain_var, 0.99 + 0.01 * var.ravel(), rtol=1e-5)
