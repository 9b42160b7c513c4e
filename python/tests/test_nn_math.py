"""Element-wise math, activations, dropout, clipping and learning-rate schedules over the C++
ops: values against numpy references written here, gradients through tf.gradients, dropout's
statistics with a fixed seed, TF's errors."""

import math

import numpy as np
import pytest

import tensorweave.compat.v1 as tf

X = np.array([[-2.0, -0.5, 0.0], [0.5, 3.0, 7.0]])
SELU_SCALE = 1.0507009873554804934193349852946
SELU_ALPHA = 1.6732632423543772848170429916717


def run(*fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(list(fetches), feed_dict=feed_dict)


def test_activations_match_numpy():
    x = tf.constant(X)
    got = run(tf.nn.elu(x), tf.nn.selu(x), tf.nn.leaky_relu(x), tf.nn.leaky_relu(x, alpha=0.5),
              tf.nn.relu6(x), tf.nn.softplus(x), tf.nn.softsign(x))
    want = [np.where(X < 0, np.exp(X) - 1, X),
            SELU_SCALE * np.where(X < 0, SELU_ALPHA * (np.exp(X) - 1), X),
            np.where(X > 0, X, np.float32(0.2) * X), np.where(X > 0, X, 0.5 * X),
            np.clip(X, 0, 6), np.log1p(np.exp(X)), X / (1 + np.abs(X))]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)


def test_activation_names_and_integer_leaky_relu():
    x = tf.constant(X)
    assert tf.nn.elu(x).op.type == "Elu"
    assert tf.nn.relu6(x).op.name == "Relu6"
    assert tf.nn.leaky_relu(x).op.name == "LeakyRelu"
    y = tf.nn.leaky_relu(tf.constant([-5, 5]))
    assert y.dtype == tf.float32
    np.testing.assert_allclose(run(y)[0], [-1.0, 5.0])


def test_activation_gradients():
    x = tf.constant(X + 0.1)  # away from the kinks
    xs = X + 0.1
    sig = 1 / (1 + np.exp(-xs))
    ys = [tf.nn.elu(x), tf.nn.selu(x), tf.nn.leaky_relu(x), tf.nn.relu6(x), tf.nn.softplus(x),
          tf.nn.softsign(x)]
    got = run(*[tf.gradients(tf.reduce_sum(y), x)[0] for y in ys])
    want = [np.where(xs < 0, np.exp(xs), 1),
            SELU_SCALE * np.where(xs < 0, SELU_ALPHA * np.exp(xs), 1),
            np.where(xs > 0, 1, np.float32(0.2)), ((xs > 0) & (xs < 6)).astype(float), sig,
            1 / (1 + np.abs(xs)) ** 2]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_math_functions():
    v = np.array([-2.5, -1.5, -0.4, 0.5, 1.5, 2.5, 3.7])
    x = tf.constant(v)
    got = run(tf.floor(x), tf.ceil(x), tf.round(x), tf.sign(x), tf.reciprocal(x),
              tf.erf(x), tf.rsqrt(tf.abs(x)), tf.math.cos(x), tf.sin(x))
    want = [np.floor(v), np.ceil(v), np.round(v), np.sign(v), 1 / v,
            [math.erf(a) for a in v], 1 / np.sqrt(np.abs(v)), np.cos(v), np.sin(v)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    # Banker's rounding, as numpy; integers come back as they are.
    np.testing.assert_array_equal(run(tf.round(x))[0], [-2, -2, -0, 0, 2, 2, 4])
    i = tf.constant([3, -4])
    assert tf.round(i) is i


def test_math_gradients():
    v = np.array([0.3, 0.9, 1.7])
    x = tf.constant(v)
    got = run(tf.gradients(tf.reduce_sum(tf.erf(x)), x)[0],
              tf.gradients(tf.reduce_sum(tf.rsqrt(x)), x)[0],
              tf.gradients(tf.reduce_sum(tf.reciprocal(x)), x)[0],
              tf.gradients(tf.nn.l2_loss(x), x)[0])
    np.testing.assert_allclose(got[0], 2 / np.sqrt(np.pi) * np.exp(-v * v), rtol=1e-12)
    np.testing.assert_allclose(got[1], -0.5 * v ** -1.5, rtol=1e-12)
    np.testing.assert_allclose(got[2], -1 / v ** 2, rtol=1e-12)
    np.testing.assert_allclose(got[3], v, rtol=1e-12)
    assert tf.gradients(tf.floor(x), x) == [None]


def test_l2_loss_is_the_op():
    loss = tf.nn.l2_loss(tf.constant(X))
    assert loss.op.type == "L2Loss"
    assert loss.shape.as_list() == []
    np.testing.assert_allclose(run(loss)[0], (X ** 2).sum() / 2)


def test_clip_by_value():
    x = tf.constant(X)
    y = tf.clip_by_value(x, -1.0, 2.0)
    assert y.op.name == "clip_by_value"
    np.testing.assert_allclose(run(y)[0], np.clip(X, -1, 2))
    g = run(tf.gradients(tf.reduce_sum(y), x)[0])[0]
    np.testing.assert_allclose(g, ((X >= -1) & (X <= 2)).astype(float))
    with pytest.raises(ValueError):
        tf.clip_by_value(tf.constant([1.0, 2.0]), tf.zeros([3, 2]), 1.0)


def test_clip_by_norm():
    v = np.array([[3.0, 4.0], [6.0, 8.0]])
    x = tf.constant(v)
    whole, rows, zero = run(tf.clip_by_norm(x, 5.0), tf.clip_by_norm(x, 5.0, axes=[1]),
                            tf.clip_by_norm(tf.zeros([2], tf.float64), 1.0))
    np.testing.assert_allclose(whole, v * 5 / np.sqrt(125))
    np.testing.assert_allclose(rows, [[3, 4], [3, 4]])
    np.testing.assert_array_equal(zero, [0, 0])


def test_global_norm_and_clip_by_global_norm():
    a = tf.constant([3.0, 4.0])
    b = tf.constant([[12.0]])
    norm = tf.global_norm([a, None, b])
    clipped, use_norm = tf.clip_by_global_norm([a, None, b], 6.5)
    assert clipped[1] is None
    unclipped, _ = tf.clip_by_global_norm([a, b], 100.0)
    got = run(norm, clipped[0], clipped[2], use_norm, unclipped[0])
    assert got[0] == pytest.approx(13.0)
    np.testing.assert_allclose(got[1], [1.5, 2.0], rtol=1e-6)
    np.testing.assert_allclose(got[2], [[6.0]], rtol=1e-6)
    assert got[3] == pytest.approx(13.0)
    np.testing.assert_allclose(got[4], [3.0, 4.0], rtol=1e-6)
    with pytest.raises(TypeError, match="t_list should be a sequence"):
        tf.clip_by_global_norm(a, 1.0)


def test_clip_by_global_norm_keeps_indexed_slices():
    values = tf.constant([[3.0, 4.0]])
    slices = tf.IndexedSlices(values, tf.constant([1]), tf.constant([3, 2]))
    clipped, norm = tf.clip_by_global_norm([slices], 2.5)
    assert isinstance(clipped[0], tf.IndexedSlices)
    assert clipped[0].indices is slices.indices
    got = run(clipped[0].values, norm)
    np.testing.assert_allclose(got[0], [[1.5, 2.0]], rtol=1e-6)
    assert got[1] == pytest.approx(5.0)


def test_clip_by_global_norm_infinite_norm_gives_nan():
    clipped, _ = tf.clip_by_global_norm([tf.constant([np.inf, 1.0])], 1.0)
    assert np.isnan(run(clipped[0])[0]).all()


def test_dropout_keeps_the_mean_with_a_fixed_seed():
    x = tf.ones([200, 100])
    y = tf.nn.dropout(x, keep_prob=0.7, seed=5)
    y2 = tf.nn.dropout(x, rate=0.3, seed=5)
    assert y.shape.as_list() == [200, 100]
    got, got2 = run(y, y2)
    kept = got != 0
    np.testing.assert_allclose(got[kept], 1 / 0.7, rtol=1e-6)
    # 20000 draws: the kept fraction is 0.7 within ~5 standard deviations (0.0032 each).
    assert abs(kept.mean() - 0.7) < 0.016
    assert abs(got.mean() - 1.0) < 0.025
    np.testing.assert_array_equal(got2 != 0, kept)  # same seeds, same draws


def test_dropout_noise_shape_and_placeholder_keep_prob():
    keep = tf.placeholder(tf.float32)
    y = tf.nn.dropout(tf.ones([50, 8]), keep, noise_shape=[50, 1], seed=1)
    got = run(y, feed_dict={keep: 0.5})[0]
    for row in got:  # one draw per row
        assert (row == row[0]).all() and row[0] in (0.0, 2.0)
    np.testing.assert_array_equal(run(y, feed_dict={keep: 1.0})[0], np.ones([50, 8]))


def test_dropout_edge_cases_and_errors():
    x = tf.constant([1.0, 2.0])
    assert tf.nn.dropout(x, keep_prob=1.0) is x
    for bad in (0.0, 1.5, -0.2):
        with pytest.raises(ValueError, match="rate must be a scalar tensor or a float in the "
                                             "range"):
            tf.nn.dropout(x, keep_prob=bad)
    with pytest.raises(ValueError, match="You must provide a rate"):
        tf.nn.dropout(x)
    with pytest.raises(ValueError, match="floating point tensor"):
        tf.nn.dropout(tf.constant([1, 2]), keep_prob=0.5)
    with pytest.raises(ValueError, match="keep_prob must be a floating point number"):
        tf.nn.dropout(x, keep_prob="half")


def test_dropout_gradient_is_the_mask_scaled():
    x = tf.ones([40, 10])
    y = tf.nn.dropout(x, keep_prob=0.5, seed=3)
    got, g = run(y, tf.gradients(tf.reduce_sum(y), x)[0])
    np.testing.assert_array_equal(g, got)  # x is ones: y is the scaled mask


def test_layers_dropout_training_flag():
    x = tf.ones([100, 20])
    off = tf.layers.dropout(x, rate=0.4)
    on = tf.layers.dropout(x, rate=0.4, training=True, seed=2)
    training = tf.placeholder(tf.bool, [])
    switch = tf.layers.Dropout(0.4, seed=2)(x, training=training)
    # A training tensor keeps the static shape, so a dense layer can follow.
    assert switch.shape.as_list() == [100, 20]
    assert tf.layers.dense(switch, 3).shape.as_list() == [100, 3]
    keras = tf.keras.layers.Dropout(0.4)(x)
    got_off, got_on, got_keras = run(off, on, keras)
    np.testing.assert_array_equal(got_off, np.ones([100, 20]))
    np.testing.assert_array_equal(got_keras, np.ones([100, 20]))
    assert set(np.unique(got_on)) <= {0.0, np.float32(1 / 0.6)}
    assert abs((got_on != 0).mean() - 0.6) < 0.05
    with tf.Session() as sess:
        train_out = sess.run(switch, {training: True})
        eval_out = sess.run(switch, {training: False})
    np.testing.assert_array_equal(eval_out, np.ones([100, 20]))
    assert abs((train_out != 0).mean() - 0.6) < 0.05


def test_weighted_and_sigmoid_cross_entropy_match_numpy():
    logits = np.array([-30.0, -1.0, 0.0, 2.0, 40.0])
    labels = np.array([0.0, 1.0, 0.5, 0.0, 1.0])
    q = 3.0
    w = tf.nn.weighted_cross_entropy_with_logits(labels=tf.constant(labels),
                                                 logits=tf.constant(logits), pos_weight=q)
    s = tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.constant(labels),
                                                logits=tf.constant(logits))
    got_w, got_s = run(w, s)
    sp = np.log1p(np.exp(-np.abs(logits))) + np.maximum(-logits, 0)  # -log(sigmoid(x))
    np.testing.assert_allclose(got_w, (1 - labels) * logits + (1 + (q - 1) * labels) * sp,
                               rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(got_s, (1 - labels) * logits + sp, rtol=1e-12, atol=1e-13)
    assert np.isfinite(got_w).all() and np.isfinite(got_s).all()


# ---- Learning-rate schedules against TF's formulas ----

def lr_at(make, steps):
    step = tf.placeholder(tf.int64, [])
    lr = make(step)
    with tf.Session() as sess:
        return [sess.run(lr, {step: s}) for s in steps]


STEPS = [0, 1, 7, 10, 25, 100, 250]


def test_exponential_and_natural_exp_decay():
    got = lr_at(lambda s: tf.train.exponential_decay(0.1, s, 10, 0.5), STEPS)
    np.testing.assert_allclose(got, [0.1 * 0.5 ** (s / 10) for s in STEPS], rtol=1e-6)
    got = lr_at(lambda s: tf.train.exponential_decay(0.1, s, 10, 0.5, staircase=True), STEPS)
    np.testing.assert_allclose(got, [0.1 * 0.5 ** (s // 10) for s in STEPS], rtol=1e-6)
    got = lr_at(lambda s: tf.train.natural_exp_decay(0.1, s, 10, 0.3), STEPS)
    np.testing.assert_allclose(got, [0.1 * np.exp(-0.3 * s / 10) for s in STEPS], rtol=1e-5)
    with pytest.raises(ValueError, match="global_step is required"):
        tf.train.exponential_decay(0.1, None, 10, 0.5)


def test_exponential_decay_name_and_dtype():
    lr = tf.train.exponential_decay(0.1, tf.constant(3), 10, 0.5)
    assert lr.op.name == "ExponentialDecay"
    assert lr.dtype == tf.float32


def test_inverse_time_decay():
    got = lr_at(lambda s: tf.train.inverse_time_decay(0.1, s, 10, 0.5), STEPS)
    np.testing.assert_allclose(got, [0.1 / (1 + 0.5 * s / 10) for s in STEPS], rtol=1e-6)
    got = lr_at(lambda s: tf.train.inverse_time_decay(0.1, s, 10, 0.5, staircase=True), STEPS)
    np.testing.assert_allclose(got, [0.1 / (1 + 0.5 * (s // 10)) for s in STEPS], rtol=1e-6)


def test_polynomial_decay_with_and_without_cycle():
    def poly(s, cycle):
        steps = 100.0
        if cycle:
            steps *= 1.0 if s == 0 else math.ceil(s / 100.0)
        else:
            s = min(s, steps)
        return (0.1 - 0.01) * (1 - s / steps) ** 2 + 0.01
    got = lr_at(lambda s: tf.train.polynomial_decay(0.1, s, 100, 0.01, power=2.0), STEPS)
    np.testing.assert_allclose(got, [poly(s, False) for s in STEPS], rtol=1e-6)
    got = lr_at(lambda s: tf.train.polynomial_decay(0.1, s, 100, 0.01, power=2.0, cycle=True),
                STEPS)
    np.testing.assert_allclose(got, [poly(s, True) for s in STEPS], rtol=1e-6)


def test_cosine_decay():
    got = lr_at(lambda s: tf.train.cosine_decay(0.1, s, 100, alpha=0.1), STEPS)
    want = [0.1 * (0.9 * 0.5 * (1 + math.cos(math.pi * min(s, 100) / 100)) + 0.1)
            for s in STEPS]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-8)


def test_piecewise_constant():
    got = lr_at(lambda s: tf.train.piecewise_constant(s, [10, 100], [1.0, 0.5, 0.1]), STEPS)
    np.testing.assert_allclose(got, [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.1])
    with pytest.raises(ValueError, match="1 less than the length of values"):
        tf.train.piecewise_constant(tf.constant(1), [10], [1.0])


def test_schedule_follows_the_global_step_variable():
    step = tf.train.get_or_create_global_step()
    lr = tf.train.exponential_decay(0.5, step, 1, 0.5, staircase=True)
    advance = tf.assign_add(step, 1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = []
        for _ in range(3):
            got.append(sess.run(lr))
            sess.run(advance)
    np.testing.assert_allclose(got, [0.5, 0.25, 0.125])


# ---- Softmax cross-entropy with dense labels: the op ----

def test_softmax_cross_entropy_is_the_op_with_gradients():
    logits_v = np.array([[1.0, 2.0, 3.0], [1000.0, 0.0, -1000.0]])
    labels_v = np.array([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])
    logits, labels = tf.constant(logits_v), tf.constant(labels_v)
    v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert v2.op.type == "SoftmaxCrossEntropyWithLogits"
    assert v2.shape.as_list() == [2]
    shifted = logits_v - logits_v.max(axis=1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    want = -(labels_v * log_softmax).sum(axis=1)
    g_logits, g_labels = tf.gradients(tf.reduce_sum(v2), [logits, labels])
    got = run(v2, v1, g_logits, g_labels)
    np.testing.assert_allclose(got[0], want, rtol=1e-12)
    np.testing.assert_allclose(got[1], want, rtol=1e-12)
    np.testing.assert_allclose(got[2], np.exp(log_softmax) - labels_v, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got[3], -log_softmax, rtol=1e-12)
    assert tf.gradients(tf.reduce_sum(v1), labels) == [None]  # v1 stops the labels' gradient


def test_softmax_cross_entropy_other_ranks():
    logits_v = np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 7
    labels_v = np.full([2, 3, 4], 0.25)
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.constant(labels_v),
                                                      logits=tf.constant(logits_v))
    assert loss.shape.as_list() == [2, 3]
    shifted = logits_v - logits_v.max(axis=-1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(run(loss)[0], -(labels_v * log_softmax).sum(axis=-1), rtol=1e-12)


def test_layers_take_the_new_activations_by_name():
    x = tf.constant([[-1.0, 2.0]])
    outs = [tf.layers.dense(x, 2, activation=name, kernel_initializer=tf.ones_initializer())
            for name in ("elu", "selu", "softplus", "softsign")]
    assert [o.op.type for o in outs] == ["Elu", "Selu", "Softplus", "Softsign"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(outs)
    np.testing.assert_allclose(got[0], [[1.0, 1.0]])
    np.testing.assert_allclose(got[2], np.log1p(np.exp([[1.0, 1.0]])), rtol=1e-6)


def test_dropout_with_a_fed_keep_prob_trains_as_kubeflows_mnist_does():
    """kubeflow's monitored_training_session/mnist.py: dropout on a hidden layer with a
    keep_prob placeholder (0.5 to train, 1.0 to evaluate), softmax cross-entropy, Adam."""
    rng = np.random.RandomState(0)
    data = rng.randn(64, 6).astype(np.float32)
    labels = np.eye(3, dtype=np.float32)[(data[:, 0] > 0).astype(int) + (data[:, 1] > 1)]
    x = tf.placeholder(tf.float32, [None, 6])
    y_ = tf.placeholder(tf.float32, [None, 3])
    w1 = tf.Variable(tf.truncated_normal([6, 32], stddev=0.3, seed=1))
    w2 = tf.Variable(tf.truncated_normal([32, 3], stddev=0.3, seed=2))
    keep_prob = tf.placeholder(tf.float32)
    hidden = tf.nn.dropout(tf.nn.relu(tf.matmul(x, w1)), keep_prob, seed=3)
    logits = tf.matmul(hidden, w2)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=logits))
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(loss, {x: data, y_: labels, keep_prob: 1.0})
        for _ in range(150):
            sess.run(train, {x: data, y_: labels, keep_prob: 0.5})
        after = sess.run(loss, {x: data, y_: labels, keep_prob: 1.0})
    assert after < 0.5 * before


def test_swish_crelu_and_log_poisson_loss():
    v = np.array([[-1.5, 0.5], [2.0, -0.2]])
    x = tf.constant(v)
    targets = np.array([[0.0, 0.5], [3.0, 7.0]])
    swish, crelu = tf.nn.swish(x), tf.nn.crelu(x)
    assert crelu.shape.as_list() == [2, 4]
    plain = tf.nn.log_poisson_loss(tf.constant(targets), x)
    full = tf.nn.log_poisson_loss(tf.constant(targets), x, compute_full_loss=True)
    got = run(swish, crelu, plain, full, tf.gradients(tf.reduce_sum(swish), x)[0])
    sig = 1 / (1 + np.exp(-v))
    np.testing.assert_allclose(got[0], v * sig, rtol=1e-12)
    np.testing.assert_allclose(got[1], np.concatenate([np.maximum(v, 0), np.maximum(-v, 0)], -1))
    base = np.exp(v) - v * targets
    np.testing.assert_allclose(got[2], base, rtol=1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        stirling = targets * np.log(targets) - targets + 0.5 * np.log(2 * np.pi * targets)
    np.testing.assert_allclose(got[3], base + np.where(targets <= 1, 0, stirling), rtol=1e-12)
    np.testing.assert_allclose(got[4], sig * (1 + v * (1 - sig)), rtol=1e-12)


def test_logical_reductions_logsumexp_and_count_nonzero():
    with tf.Graph().as_default():
        b = np.array([[True, False, True], [True, True, True]])
        x = np.array([[1000.0, 1000.0, -2.0], [-np.inf, 0.5, 3.0]], dtype=np.float32)
        fetches = [tf.reduce_all(b, axis=1), tf.reduce_any(b, 0, keepdims=True),
                   tf.reduce_any(tf.zeros([0], tf.bool)), tf.reduce_all(b),
                   tf.reduce_logsumexp(x, axis=1), tf.reduce_logsumexp(x, keepdims=True),
                   tf.count_nonzero(np.array([[0, 3, 0], [1, 2, 0]])),
                   tf.count_nonzero(b, axis=0, dtype=tf.int32),
                   tf.math.reduce_logsumexp(tf.fill([2], -np.inf))]
        assert fetches[5].shape.as_list() == [1, 1]
        with tf.Session() as sess:
            out = sess.run(fetches)
    np.testing.assert_array_equal(out[0], [False, True])
    np.testing.assert_array_equal(out[1], [[True, True, True]])
    assert not out[2] and not out[3]
    with np.errstate(over="ignore"):
        want = [1000 + np.log(2 + np.exp(-1002.0)),
                3.0 + np.log(np.exp(0.5 - 3.0) + 1.0)]
    np.testing.assert_allclose(out[4], want, rtol=1e-6)  # no overflow at 1000
    np.testing.assert_allclose(out[5], [[1000 + np.log(2)]], rtol=1e-6)
    assert out[6] == 3 and out[6].dtype == np.int64
    np.testing.assert_array_equal(out[7], [2, 1, 2])
    assert out[8] == -np.inf  # every entry -inf: -inf, not NaN


def test_random_shuffle_is_seeded_by_the_graph_seed():
    def shuffled():
        with tf.Graph().as_default():
            tf.set_random_seed(3)
            rows = tf.random.shuffle(np.arange(20).reshape(10, 2))
            with tf.Session() as sess:
                return sess.run(rows), sess.run(rows)

    (a1, a2), (b1, _) = shuffled(), shuffled()
    np.testing.assert_array_equal(a1, b1)  # the same seeds, the same order
    assert not np.array_equal(a1, a2)  # the next run continues the sequence
    assert sorted(a1[:, 0].tolist()) == list(range(0, 20, 2))
    np.testing.assert_array_equal(a1[:, 1], a1[:, 0] + 1)  # rows move whole
    assert tf.random_shuffle is tf.random.shuffle
    with tf.Graph().as_default():  # as TF: a random permutation has no gradient
        v = tf.Variable([1.0, 2.0])
        assert tf.gradients(tf.reduce_sum(tf.random.shuffle(v)), v) == [None]
