"""tf.nn.nce_loss and tf.nn.sampled_softmax_loss over the candidate-sampler ops: values
against numpy given the samples, accidental hits masked, partitioned weights equal to whole
ones, the samplers' seeding, and a model trained with each learning its classes."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def sigmoid_xent(labels, logits):
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


def problem():
    rng = np.random.RandomState(0)
    w = rng.randn(10, 4).astype(np.float32)
    b = rng.randn(10).astype(np.float32)
    x = rng.randn(3, 4).astype(np.float32)
    labels = np.array([[2], [7], [5]], dtype=np.int64)
    sampled = np.array([1, 7, 9], dtype=np.int64)  # 7 is row 1's true class: an accidental hit
    true_q = np.full((3, 1), 0.25, np.float32)
    sampled_q = np.array([0.5, 0.2, 0.1], np.float32)
    return w, b, x, labels, sampled, true_q, sampled_q


def expected_logits(w, b, x, labels, sampled, true_q, sampled_q):
    true_logits = np.sum(x * w[labels[:, 0]], axis=1, keepdims=True) + b[labels] - np.log(true_q)
    sampled_logits = x @ w[sampled].T + b[sampled] - np.log(sampled_q)
    return true_logits, sampled_logits


def test_nce_loss_matches_numpy_given_the_samples():
    w, b, x, labels, sampled, true_q, sampled_q = problem()
    loss = tf.nn.nce_loss(w, b, labels, x, num_sampled=3, num_classes=10,
                          sampled_values=(sampled, true_q, sampled_q))
    assert loss.shape.as_list() == [3]
    with tf.Session() as sess:
        got = sess.run(loss)
    t, s = expected_logits(w, b, x, labels, sampled, true_q, sampled_q)
    want = sigmoid_xent(1.0, t).sum(axis=1) + sigmoid_xent(0.0, s).sum(axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_sampled_softmax_masks_accidental_hits():
    w, b, x, labels, sampled, true_q, sampled_q = problem()
    loss = tf.nn.sampled_softmax_loss(w, b, labels, x, num_sampled=3, num_classes=10,
                                      sampled_values=(sampled, true_q, sampled_q))
    kept = tf.nn.sampled_softmax_loss(w, b, labels, x, num_sampled=3, num_classes=10,
                                      sampled_values=(sampled, true_q, sampled_q),
                                      remove_accidental_hits=False)
    with tf.Session() as sess:
        got, got_kept = sess.run([loss, kept])
    t, s = expected_logits(w, b, x, labels, sampled, true_q, sampled_q)
    logits = np.concatenate([t, s], axis=1).astype(np.float64)
    masked = logits.copy()
    masked[1, 1 + 1] = -np.finfo(np.float32).max  # row 1's sampled 7

    def xent(z):
        z = z - z.max(axis=1, keepdims=True)
        return -(z[:, 0] - np.log(np.exp(z).sum(axis=1)))

    np.testing.assert_allclose(got, xent(masked), rtol=1e-5)
    np.testing.assert_allclose(got_kept, xent(logits), rtol=1e-5)
    assert got[1] < got_kept[1]  # the hit no longer competes with the true class


def test_partitioned_weights_give_the_whole_matrix_loss():
    w, b, x, labels, sampled, true_q, sampled_q = problem()
    whole = tf.nn.nce_loss(w, b, labels, x, num_sampled=3, num_classes=10,
                           sampled_values=(sampled, true_q, sampled_q))
    # "mod": class i in part i % 2 at row i // 2.
    parts = [tf.Variable(w[0::2]), tf.Variable(w[1::2])]
    split = tf.nn.nce_loss(parts, b, labels, x, num_sampled=3, num_classes=10,
                           sampled_values=(sampled, true_q, sampled_q))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, c = sess.run([whole, split])
    np.testing.assert_allclose(a, c, rtol=1e-6)


def test_samplers_are_seeded_and_draw_unique_classes():
    def draw():
        with tf.Graph().as_default():
            tf.set_random_seed(5)
            sampled, true_count, sampled_count = tf.nn.log_uniform_candidate_sampler(
                true_classes=[[0], [3]], num_true=1, num_sampled=8, unique=True, range_max=50)
            assert sampled.shape.as_list() == [8] and true_count.shape.as_list() == [2, 1]
            with tf.Session() as sess:
                return sess.run([sampled, true_count, sampled_count])

    a, b = draw(), draw()
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert len(set(a[0].tolist())) == 8 and a[0].min() >= 0 and a[0].max() < 50
    assert a[1][0, 0] > a[1][1, 0]  # class 0 is the likeliest
    hits = tf.nn.compute_accidental_hits([[1, 2]], [2, 5, 1], num_true=2)
    with tf.Session() as sess:
        indices, ids, weights = sess.run(hits)
    np.testing.assert_array_equal(indices, [0, 0])
    np.testing.assert_array_equal(ids, [2, 0])


# NCE learns each class's score as a separate binary problem, calibrated against the
# sampler's log-uniform Q, and needs more steps here than the sampled softmax (measured:
# 0.02 after 300 steps, 0.66 after 1,000, where the sampled softmax passes 0.9 after 300).
@pytest.mark.parametrize("loss_fn,steps,target", [(tf.nn.nce_loss, 1000, 0.4),
                                                  (tf.nn.sampled_softmax_loss, 300, 0.9)])
def test_a_model_trained_with_a_sampled_loss_learns_its_classes(loss_fn, steps, target):
    # 200 classes (chance: 0.005), each example's input a noisy code of its class: the
    # sampled loss must train the output layer well enough that the full softmax ranks the
    # true class first.
    rng = np.random.RandomState(1)
    classes, dim = 200, 16
    codes = rng.randn(classes, dim).astype(np.float32)
    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, [None, dim])
    y = tf.placeholder(tf.int64, [None, 1])
    w = tf.Variable(tf.truncated_normal([classes, dim], stddev=0.1))
    b = tf.Variable(tf.zeros([classes]))
    loss = tf.reduce_mean(loss_fn(w, b, y, x, num_sampled=20, num_classes=classes))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    full_logits = tf.matmul(x, w, transpose_b=True) + b
    accuracy = tf.reduce_mean(tf.to_float(tf.equal(tf.argmax(full_logits, 1), y[:, 0])))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = None
        for _ in range(steps):
            labels = rng.randint(0, classes, size=(64, 1))
            feed = {x: codes[labels[:, 0]] + 0.1 * rng.randn(64, dim), y: labels}
            value, _ = sess.run([loss, train], feed)
            first = value if first is None else first
        labels = np.arange(classes).reshape(-1, 1)
        acc = sess.run(accuracy, {x: codes + 0.1 * rng.randn(classes, dim), y: labels})
    assert value < first / 2
    assert acc > target
