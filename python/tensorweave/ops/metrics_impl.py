"""tf.metrics: TF 1.x's streaming metrics.

Each metric builds the graph TF 1.x's metrics_impl builds: its running totals are local
variables (collections LOCAL_VARIABLES and METRIC_VARIABLES, so `local_variables_initializer`
resets them) in a variable scope named after the metric ("accuracy/total",
"precision/true_positives/count"), and it returns `(value, update_op)`: `value` reads the
totals, `update_op` adds one batch to them and gives the updated value. The ops themselves
run in the C++ runtime."""

from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops import index_ops
from tensorweave.ops import math_ops
from tensorweave.ops import variable_scope
from tensorweave.ops import variables


# ---- the pieces every metric shares ----

def metric_variable(shape, dtype, validate_shape=True, name=None):
    """A zero-initialized local variable holding a running total of a metric."""
    return variables.Variable(
        array_ops.zeros(shape, dtype), trainable=False,
        collections=[ops.GraphKeys.LOCAL_VARIABLES, ops.GraphKeys.METRIC_VARIABLES],
        validate_shape=validate_shape, name=name)


def _safe_div(numerator, denominator, name):
    """numerator / denominator, 0 where the denominator is 0 (TF's div_no_nan)."""
    zero = array_ops.zeros_like(numerator)
    safe = array_ops.where(math_ops.greater(denominator, 0), denominator,
                           array_ops.ones_like(denominator))
    return array_ops.where(math_ops.greater(denominator, 0), math_ops.truediv(numerator, safe),
                           zero, name=name)


def _squeeze_last(t):
    shape = t.get_shape().as_list() if t.get_shape().ndims is not None else None
    return array_ops.reshape(t, shape[:-1])


def _remove_squeezable_dimensions(predictions, labels, weights):
    """As TF: when the static ranks of labels and predictions differ by one and the longer's
    last dimension is 1, it is dropped; weights likewise against predictions."""
    predictions = convert_to_tensor(predictions)
    if labels is not None:
        labels = convert_to_tensor(labels)
        p_shape, l_shape = predictions.get_shape(), labels.get_shape()
        if p_shape.ndims is not None and l_shape.ndims is not None:
            p_dims, l_dims = p_shape.as_list(), l_shape.as_list()
            if (len(p_dims) == len(l_dims) + 1 and p_dims[-1] == 1
                    and None not in p_dims[:-1]):
                predictions = _squeeze_last(predictions)
            elif (len(l_dims) == len(p_dims) + 1 and l_dims[-1] == 1
                  and None not in l_dims[:-1]):
                labels = _squeeze_last(labels)
    if weights is not None:
        weights = convert_to_tensor(weights)
        w_shape, p_shape = weights.get_shape(), predictions.get_shape()
        if w_shape.ndims is not None and p_shape.ndims is not None:
            w_dims = w_shape.as_list()
            if (w_shape.ndims == p_shape.ndims + 1 and w_dims[-1] == 1
                    and None not in w_dims[:-1]):
                weights = _squeeze_last(weights)
    return predictions, labels, weights


def _broadcast_weights(weights, values):
    """`weights` as float32 in the shape of `values` (weights broadcast against values)."""
    weights = math_ops.cast(weights, dtypes.float32)
    return math_ops.multiply(weights, array_ops.ones_like(values))


def _collect(value, update_op, metrics_collections, updates_collections):
    for name in metrics_collections or ():
        ops.add_to_collection(name, value)
    for name in updates_collections or ():
        ops.add_to_collection(name, update_op)
    return value, update_op


# ---- means ----

def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) mean of every value seen: total / count."""
    with variable_scope.variable_scope(name, "mean", (values, weights)):
        values = math_ops.cast(values, dtypes.float32)
        total = metric_variable([], dtypes.float32, name="total")
        count = metric_variable([], dtypes.float32, name="count")
        if weights is None:
            num_values = math_ops.cast(array_ops.size(values), dtypes.float32)
        else:
            values, _, weights = _remove_squeezable_dimensions(values, None, weights)
            weights = _broadcast_weights(weights, values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.reduce_sum(weights)
        update_total = variables.assign_add(total, math_ops.reduce_sum(values))
        with ops.control_dependencies([values]):
            update_count = variables.assign_add(count, num_values)
        value = _safe_div(total, count, "value")
        update_op = _safe_div(update_total, update_count, "update_op")
        return _collect(value, update_op, metrics_collections, updates_collections)


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """How often predictions equal labels: the mean of their element-wise equality."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    predictions.get_shape().assert_is_compatible_with(labels.get_shape())
    if labels.dtype != predictions.dtype:
        predictions = math_ops.cast(predictions, labels.dtype)
    is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections,
                name or "accuracy")


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    errors = math_ops.abs(math_ops.subtract(predictions, labels))
    return mean(errors, weights, metrics_collections, updates_collections,
                name or "mean_absolute_error")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    errors = math_ops.square(math_ops.subtract(predictions, labels))
    return mean(errors, weights, metrics_collections, updates_collections,
                name or "mean_squared_error")


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    mse, update_mse = mean_squared_error(labels, predictions, weights, None, None,
                                         name or "root_mean_squared_error")
    return _collect(math_ops.sqrt(mse), math_ops.sqrt(update_mse), metrics_collections,
                    updates_collections)


# ---- counts of a condition ----

def _count_condition(values, weights, metrics_collections, updates_collections):
    count = metric_variable([], dtypes.float32, name="count")
    values = math_ops.cast(values, dtypes.float32)
    if weights is not None:
        values = math_ops.multiply(values, math_ops.cast(weights, dtypes.float32))
    value = array_ops.identity(count)
    update_op = variables.assign_add(count, math_ops.reduce_sum(values))
    return _collect(value, update_op, metrics_collections, updates_collections)


def _condition_metric(default_name, label_is, prediction_is):
    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope.variable_scope(name, default_name, (predictions, labels, weights)):
            predictions, labels, weights = _remove_squeezable_dimensions(
                math_ops.cast(predictions, dtypes.bool), math_ops.cast(labels, dtypes.bool),
                weights)
            is_label = labels if label_is else math_ops.logical_not(labels)
            is_prediction = predictions if prediction_is else math_ops.logical_not(predictions)
            return _count_condition(math_ops.logical_and(is_label, is_prediction), weights,
                                    metrics_collections, updates_collections)
    metric.__name__ = default_name
    return metric


true_positives = _condition_metric("true_positives", True, True)
false_positives = _condition_metric("false_positives", False, True)
false_negatives = _condition_metric("false_negatives", True, False)
true_negatives = _condition_metric("true_negatives", False, False)


def _ratio_metric(default_name, other):
    """precision (other: false_positives) or recall (other: false_negatives): tp/(tp+other)."""
    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope.variable_scope(name, default_name, (predictions, labels, weights)):
            predictions, labels, weights = _remove_squeezable_dimensions(
                math_ops.cast(predictions, dtypes.bool), math_ops.cast(labels, dtypes.bool),
                weights)
            tp, update_tp = true_positives(labels, predictions, weights)
            rest, update_rest = other(labels, predictions, weights)
            value = _safe_div(tp, math_ops.add(tp, rest), "value")
            update_op = _safe_div(update_tp, math_ops.add(update_tp, update_rest), "update_op")
            return _collect(value, update_op, metrics_collections, updates_collections)
    metric.__name__ = default_name
    return metric


precision = _ratio_metric("precision", false_positives)
recall = _ratio_metric("recall", false_negatives)


# ---- area under a curve ----

_THRESHOLD_EPSILON = 1e-7


def _confusion_at_thresholds(labels, predictions, thresholds, weights):
    """Local [T] totals of tp, fn, tn, fp at each threshold (a prediction above a threshold
    is positive) and their update ops, as TF's _confusion_matrix_at_thresholds."""
    predictions, labels, weights = _remove_squeezable_dimensions(
        math_ops.cast(predictions, dtypes.float32), math_ops.cast(labels, dtypes.bool), weights)
    # [T, N] by broadcasting a row of predictions against a column of thresholds.
    predictions_row = array_ops.reshape(predictions, [1, -1])
    thresholds_column = array_ops.reshape(constant(thresholds, dtype=dtypes.float32), [-1, 1])
    pred_is_pos = math_ops.cast(math_ops.greater(predictions_row, thresholds_column),
                                dtypes.float32)
    pred_is_neg = math_ops.subtract(1.0, pred_is_pos)
    label_is_pos = array_ops.reshape(math_ops.cast(labels, dtypes.float32), [1, -1])
    label_is_neg = math_ops.subtract(1.0, label_is_pos)
    if weights is not None:
        weights_row = array_ops.reshape(_broadcast_weights(weights, predictions), [1, -1])
        label_is_pos = math_ops.multiply(label_is_pos, weights_row)
        label_is_neg = math_ops.multiply(label_is_neg, weights_row)
    totals, updates = {}, {}
    for key, label_side, pred_side in (("tp", label_is_pos, pred_is_pos),
                                       ("fn", label_is_pos, pred_is_neg),
                                       ("tn", label_is_neg, pred_is_neg),
                                       ("fp", label_is_neg, pred_is_pos)):
        name = {"tp": "true_positives", "fn": "false_negatives", "tn": "true_negatives",
                "fp": "false_positives"}[key]
        totals[key] = metric_variable([len(thresholds)], dtypes.float32, name=name)
        counted = math_ops.reduce_sum(math_ops.multiply(label_side, pred_side), 1)
        updates[key] = variables.assign_add(totals[key], counted)
    return totals, updates


def _pr_auc_by_interpolation(tp, fp, fn, n):
    """Davis & Goadrich's interpolation of the precision-recall curve, as TF's
    careful_interpolation."""
    dtp = math_ops.subtract(tp[:n - 1], tp[1:])
    p = math_ops.add(tp, fp)
    dp = math_ops.maximum(math_ops.subtract(p[:n - 1], p[1:]), 0.0)
    prec_slope = _safe_div(dtp, dp, "prec_slope")
    intercept = math_ops.subtract(tp[1:], math_ops.multiply(prec_slope, p[1:]))
    both_positive = math_ops.logical_and(math_ops.greater(p[:n - 1], 0.0),
                                         math_ops.greater(p[1:], 0.0))
    ratio = _safe_div(p[:n - 1], math_ops.maximum(p[1:], 0.0), "p_ratio")
    safe_p_ratio = array_ops.where(both_positive, ratio, array_ops.ones_like(p[1:]))
    area = math_ops.multiply(prec_slope, math_ops.add(
        dtp, math_ops.multiply(intercept, math_ops.log(safe_p_ratio))))
    return math_ops.reduce_sum(
        _safe_div(area, math_ops.maximum(math_ops.add(tp[1:], fn[1:]), 0.0), "pr_terms"),
        name="interpolate_pr_auc")


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
        updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal",
        thresholds=None):
    """The area under the ROC or PR curve, by a Riemann sum over `num_thresholds`
    thresholds spread over [0, 1] (predictions must be probabilities)."""
    if curve not in ("ROC", "PR"):
        raise ValueError("curve must be either ROC or PR, %s unknown" % curve)
    if summation_method not in ("trapezoidal", "careful_interpolation", "minoring",
                                "majoring"):
        raise ValueError("Invalid summation_method: %s" % summation_method)
    with variable_scope.variable_scope(name, "auc", (labels, predictions, weights)):
        if thresholds is not None:
            points = [0.0 - _THRESHOLD_EPSILON] + sorted(thresholds) + [
                1.0 + _THRESHOLD_EPSILON]
        else:
            if num_thresholds < 2:
                raise ValueError("num_thresholds must be > 1.")
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            points = [0.0 - _THRESHOLD_EPSILON] + inner + [1.0 + _THRESHOLD_EPSILON]
        n = len(points)
        totals, updates = _confusion_at_thresholds(labels, predictions, points, weights)

        def compute(v, scope):
            epsilon = 1.0e-6
            if curve == "PR" and summation_method == "careful_interpolation":
                return _pr_auc_by_interpolation(v["tp"], v["fp"], v["fn"], n)
            rec = math_ops.truediv(math_ops.add(v["tp"], epsilon),
                                   math_ops.add(math_ops.add(v["tp"], v["fn"]), epsilon))
            if curve == "ROC":
                x = math_ops.truediv(v["fp"], math_ops.add(math_ops.add(v["fp"], v["tn"]),
                                                           epsilon))
                y = rec
            else:
                x = rec
                y = math_ops.truediv(math_ops.add(v["tp"], epsilon),
                                     math_ops.add(math_ops.add(v["tp"], v["fp"]), epsilon))
            width = math_ops.subtract(x[:n - 1], x[1:])
            if summation_method == "minoring":
                height = math_ops.minimum(y[:n - 1], y[1:])
            elif summation_method == "majoring":
                height = math_ops.maximum(y[:n - 1], y[1:])
            else:
                height = math_ops.truediv(math_ops.add(y[:n - 1], y[1:]), 2.0)
            return math_ops.reduce_sum(math_ops.multiply(width, height), name=scope)

        value = compute(totals, "value")
        update_op = compute(updates, "update_op")
        return _collect(value, update_op, metrics_collections, updates_collections)


# ---- mean intersection over union ----

def confusion_matrix(labels, predictions, num_classes=None, weights=None,
                     dtype=dtypes.int32, name=None):
    """The [num_classes, num_classes] matrix whose (i, j) entry counts (or sums the weights
    of) the examples labelled i and predicted j. num_classes must be known here."""
    if num_classes is None:
        raise ValueError("confusion_matrix needs num_classes in tensorweave (TF infers it "
                         "from the data with a control-flow op)")
    with ops.name_scope(name, "confusion_matrix", (predictions, labels, num_classes, weights)):
        labels = array_ops.reshape(math_ops.cast(labels, dtypes.int32), [-1])
        predictions = array_ops.reshape(math_ops.cast(predictions, dtypes.int32), [-1])
        cells = math_ops.add(math_ops.multiply(labels, num_classes), predictions)
        if weights is None:
            values = math_ops.cast(array_ops.ones_like(cells), dtype)
        else:
            values = math_ops.cast(array_ops.reshape(weights, [-1]), dtype)
        counts = index_ops.unsorted_segment_sum(values, cells, num_classes * num_classes)
        return array_ops.reshape(counts, [num_classes, num_classes])


def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """The mean over classes of intersection / union, from a running confusion matrix;
    classes never seen (union 0) are left out of the mean."""
    with variable_scope.variable_scope(name, "mean_iou", (predictions, labels, weights)):
        predictions = convert_to_tensor(predictions)
        labels = convert_to_tensor(labels)
        predictions.get_shape().assert_is_compatible_with(labels.get_shape())
        total_cm = metric_variable([num_classes, num_classes], dtypes.float64,
                                   name="total_confusion_matrix")
        current = confusion_matrix(labels, predictions, num_classes, weights=weights,
                                   dtype=dtypes.float64)
        update_cm = variables.assign_add(total_cm, current)

        def compute(cm, scope):
            cm = math_ops.cast(cm, dtypes.float32)
            sum_over_row = math_ops.reduce_sum(cm, 0)
            sum_over_col = math_ops.reduce_sum(cm, 1)
            diagonal = array_ops.gather(array_ops.reshape(cm, [-1]),
                                        [i * (num_classes + 1) for i in range(num_classes)])
            denominator = math_ops.subtract(math_ops.add(sum_over_row, sum_over_col), diagonal)
            num_valid = math_ops.reduce_sum(
                math_ops.cast(math_ops.not_equal(denominator, 0.0), dtypes.float32))
            iou = _safe_div(diagonal, denominator, "iou")
            return _safe_div(math_ops.reduce_sum(iou), num_valid, scope)

        value = compute(total_cm, "mean_iou")
        update_op = compute(update_cm, "update_op")
        return _collect(value, update_op, metrics_collections, updates_collections)
