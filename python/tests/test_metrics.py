"""tf.metrics: streaming metrics over local variables, checked against numpy over batches."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


def _stream(metric_fn, batches, **feeds_dtypes):
    """Runs `metric_fn(placeholders...)`'s update op on every batch, then its value.
    Returns (the update op's results, the final value, the metric's local variables)."""
    with tf.Graph().as_default():
        holders = [tf.placeholder(dtype, name=name) for name, dtype in feeds_dtypes.items()]
        value, update = metric_fn(*holders)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            updates = [sess.run(update, dict(zip(holders, batch))) for batch in batches]
            final = sess.run(value)
            names = sorted(v.op.name for v in tf.get_collection(tf.GraphKeys.METRIC_VARIABLES))
    return updates, final, names


def test_accuracy_streams_over_batches_with_tf_variable_names():
    rng = np.random.RandomState(0)
    batches = [(rng.randint(0, 3, size=n), rng.randint(0, 3, size=n)) for n in (5, 8, 3)]
    updates, final, names = _stream(lambda l, p: tf.metrics.accuracy(l, p), batches,
                                    labels=tf.int32, predictions=tf.int32)
    labels = np.concatenate([b[0] for b in batches])
    preds = np.concatenate([b[1] for b in batches])
    assert final == pytest.approx(np.mean(labels == preds))
    first = np.mean(batches[0][0] == batches[0][1])
    assert updates[0] == pytest.approx(first)
    assert names == ["accuracy/count", "accuracy/total"]
    with tf.Graph().as_default(), pytest.raises(ValueError, match="incompatible"):
        tf.metrics.accuracy(tf.constant([1, 2, 3]), tf.constant([1, 2]))


def test_weighted_mean_and_the_empty_mean_is_zero():
    batches = [([1.0, 2.0, 3.0], [1.0, 0.0, 2.0]), ([4.0], [0.5])]
    _, final, _ = _stream(lambda v, w: tf.metrics.mean(v, weights=w), batches,
                          values=tf.float32, weights=tf.float32)
    assert final == pytest.approx((1 + 6 + 2) / 3.5)
    with tf.Graph().as_default():
        value, _ = tf.metrics.mean(tf.constant([1.0]))
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert sess.run(value) == 0.0  # nothing counted yet: 0, not NaN


def test_precision_recall_and_the_condition_counts():
    labels = np.array([1, 0, 1, 1, 0, 0, 1], np.int64)
    preds = np.array([1, 1, 0, 1, 0, 1, 1], np.int64)
    tp = np.sum((labels == 1) & (preds == 1))
    fp = np.sum((labels == 0) & (preds == 1))
    fn = np.sum((labels == 1) & (preds == 0))
    tn = np.sum((labels == 0) & (preds == 0))
    batches = [(labels[:4], preds[:4]), (labels[4:], preds[4:])]
    for fn_, expected in [(tf.metrics.precision, tp / (tp + fp)),
                          (tf.metrics.recall, tp / (tp + fn)),
                          (tf.metrics.true_positives, tp), (tf.metrics.false_positives, fp),
                          (tf.metrics.false_negatives, fn), (tf.metrics.true_negatives, tn)]:
        _, final, names = _stream(lambda l, p, f=fn_: f(l, p), batches, labels=tf.int64,
                                  predictions=tf.int64)
        assert final == pytest.approx(expected), fn_.__name__
    assert names == ["true_negatives/count"]
    _, _, names = _stream(lambda l, p: tf.metrics.precision(l, p), batches, labels=tf.int64,
                          predictions=tf.int64)
    assert names == ["precision/false_positives/count", "precision/true_positives/count"]


def _exact_roc_auc(labels, scores):
    # Mann-Whitney: the chance that a positive scores above a negative (ties count half).
    pos, neg = scores[labels == 1], scores[labels == 0]
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return greater / (len(pos) * len(neg))


def test_auc_approaches_the_exact_roc_area_and_pr_is_between_0_and_1():
    rng = np.random.RandomState(3)
    labels = rng.randint(0, 2, size=400)
    scores = np.clip(0.35 * labels + 0.65 * rng.rand(400), 0, 1).astype(np.float32)
    batches = [(labels[:150], scores[:150]), (labels[150:], scores[150:])]
    _, roc, names = _stream(lambda l, p: tf.metrics.auc(l, p, num_thresholds=1000), batches,
                            labels=tf.int64, predictions=tf.float32)
    assert roc == pytest.approx(_exact_roc_auc(labels, scores), abs=0.01)
    assert names == ["auc/false_negatives", "auc/false_positives", "auc/true_negatives",
                     "auc/true_positives"]
    for method in ("trapezoidal", "careful_interpolation", "minoring", "majoring"):
        _, pr, _ = _stream(lambda l, p, m=method: tf.metrics.auc(l, p, curve="PR",
                                                                  summation_method=m),
                           batches, labels=tf.int64, predictions=tf.float32)
        assert 0.5 < pr <= 1.0, method
    with pytest.raises(ValueError, match="curve must be either ROC or PR"):
        tf.metrics.auc(tf.constant([1]), tf.constant([0.5]), curve="XY")


def test_mean_iou_from_a_running_confusion_matrix():
    labels = np.array([0, 0, 1, 1, 2, 2], np.int32)
    preds = np.array([0, 1, 1, 1, 2, 0], np.int32)
    cm = np.zeros((3, 3))
    for l, p in zip(labels, preds):
        cm[l, p] += 1
    iou = np.diag(cm) / (cm.sum(0) + cm.sum(1) - np.diag(cm))
    batches = [(labels[:3], preds[:3]), (labels[3:], preds[3:])]
    _, final, names = _stream(lambda l, p: tf.metrics.mean_iou(l, p, num_classes=3), batches,
                              labels=tf.int32, predictions=tf.int32)
    assert final == pytest.approx(iou.mean())
    assert names == ["mean_iou/total_confusion_matrix"]
    with tf.Graph().as_default(), tf.Session() as sess:
        got = sess.run(tf.confusion_matrix(labels, preds, num_classes=3))
        np.testing.assert_array_equal(got, cm.astype(np.int32))


def test_errors_and_the_collections_a_metric_fills():
    labels = np.array([1.0, 2.0, 4.0], np.float32)
    preds = np.array([1.5, 2.0, 2.0], np.float32)
    with tf.Graph().as_default():
        l, p = tf.constant(labels), tf.constant(preds)
        mae, mae_up = tf.metrics.mean_absolute_error(l, p, metrics_collections=["m"],
                                                     updates_collections=["u"])
        mse, mse_up = tf.metrics.mean_squared_error(l, p)
        rmse, rmse_up = tf.metrics.root_mean_squared_error(l, p)
        assert tf.get_collection("m") == [mae] and tf.get_collection("u") == [mae_up]
        assert not tf.trainable_variables()
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            sess.run([mae_up, mse_up, rmse_up])
            got = sess.run([mae, mse, rmse])
    err = preds - labels
    np.testing.assert_allclose(got, [np.abs(err).mean(), (err ** 2).mean(),
                                     np.sqrt((err ** 2).mean())], rtol=1e-6)


def test_local_variables_initializer_resets_a_metric():
    with tf.Graph().as_default():
        labels = tf.placeholder(tf.int32)
        acc, update = tf.metrics.accuracy(labels, tf.constant([1, 1]))
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            sess.run(update, {labels: [1, 0]})
            assert sess.run(acc) == pytest.approx(0.5)
            sess.run(tf.local_variables_initializer())
            sess.run(update, {labels: [1, 1]})
            assert sess.run(acc) == pytest.approx(1.0)
