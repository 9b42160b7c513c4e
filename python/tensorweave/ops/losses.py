"""tf.losses: TF 1.x's loss functions, their reductions and the LOSSES collection.

Each builds the same graph of ops TF 1.x's losses_impl builds (element-wise losses, then
compute_weighted_loss), so values, reductions, dtypes and the collection match TF's; the ops
themselves run in the C++ runtime."""

from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops import math_ops
from tensorweave.ops import nn_ops


class Reduction:
    """How compute_weighted_loss reduces the weighted element losses."""
    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError("Invalid Reduction Key %s." % key)


# ---- the collection ----

def add_loss(loss, loss_collection=ops.GraphKeys.LOSSES):
    if loss_collection:
        ops.add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=ops.GraphKeys.LOSSES):
    return ops.get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    return ops.get_collection(ops.GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return convert_to_tensor(0.0)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    if not losses:
        raise ValueError("No losses found in the LOSSES collection.")
    return math_ops.add_n(losses, name=name)


# ---- reductions ----

def _div_no_nan(numerator, denominator, name):
    """numerator / denominator, 0 where the denominator is 0 (TF's div_no_nan)."""
    zero = math_ops.equal(denominator, 0.0)
    safe = array_ops.where(zero, array_ops.ones_like(denominator), denominator)
    return array_ops.where(zero, array_ops.zeros_like(numerator),
                           math_ops.truediv(numerator, safe), name=name)


def _num_present(losses, weights, per_batch=False):
    """How many elements of `losses` have a non-zero weight (per batch row, kept as
    [batch, 1, ...], when per_batch)."""
    with ops.name_scope(None, "num_present", (losses, weights)):
        weights = math_ops.cast(weights, dtypes.float32)
        present = array_ops.where(math_ops.equal(weights, 0.0), array_ops.zeros_like(weights),
                                  array_ops.ones_like(weights))
        present = math_ops.multiply(present, array_ops.ones_like(losses, dtype=dtypes.float32))
        if per_batch:
            return math_ops.reduce_sum(present, axis=list(range(1, losses.shape.ndims)),
                                       keepdims=True, name="value")
        return math_ops.reduce_sum(present, name="value")


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=ops.GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    Reduction.validate(reduction)
    with ops.name_scope(scope, "weighted_loss", (losses, weights)):
        losses = convert_to_tensor(losses)
        input_dtype = losses.dtype
        losses = math_ops.cast(losses, dtypes.float32)
        weights = math_ops.cast(weights, dtypes.float32)
        weighted = math_ops.multiply(losses, weights)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = math_ops.reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = _div_no_nan(loss, math_ops.reduce_sum(math_ops.multiply(
                    array_ops.ones_like(losses), weights)), "value")
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = _div_no_nan(loss, _num_present(losses, weights), "value")
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _div_no_nan(loss, math_ops.cast(array_ops.size(losses), dtypes.float32),
                                   "value")
        loss = math_ops.cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


def _check(labels, predictions, what):
    if labels is None:
        raise ValueError("labels must not be None.")
    if predictions is None:
        raise ValueError("%s must not be None." % what)


def _same_shape(predictions, labels):
    if (predictions.shape.ndims is not None and labels.shape.ndims is not None and
            not predictions.shape.is_compatible_with(labels.shape)):
        raise ValueError("Shapes %s and %s are incompatible" % (predictions.shape, labels.shape))


def _prepared(labels, predictions):
    predictions = math_ops.to_float(convert_to_tensor(predictions))
    labels = math_ops.to_float(convert_to_tensor(labels))
    _same_shape(predictions, labels)
    return labels, predictions


# ---- the losses ----

def _pointwise(name, what, labels, predictions, weights, scope, loss_collection, reduction,
               element_losses):
    """The losses computed element by element from float labels and predictions of one
    shape, then weighted and reduced."""
    _check(labels, predictions, what)
    with ops.name_scope(scope, name, (predictions, labels, weights)) as scope:
        labels, predictions = _prepared(labels, predictions)
        return compute_weighted_loss(element_losses(labels, predictions), weights, scope,
                                     loss_collection, reduction)


def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=ops.GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    return _pointwise("absolute_difference", "predictions", labels, predictions, weights,
                      scope, loss_collection, reduction,
                      lambda y, p: math_ops.abs(math_ops.subtract(p, y)))


def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=ops.GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    return _pointwise("mean_squared_error", "predictions", labels, predictions, weights,
                      scope, loss_collection, reduction,
                      lambda y, p: math_ops.square(math_ops.subtract(p, y)))


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=ops.GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    def element_losses(y, p):
        abs_error = math_ops.abs(math_ops.subtract(p, y))
        quadratic = math_ops.minimum(abs_error, delta)
        linear = math_ops.subtract(abs_error, quadratic)
        return math_ops.add(math_ops.multiply(math_ops.multiply(quadratic, quadratic), 0.5),
                            math_ops.multiply(linear, float(delta)))
    return _pointwise("huber_loss", "predictions", labels, predictions, weights, scope,
                      loss_collection, reduction, element_losses)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=ops.GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    def element_losses(y, p):
        return math_ops.subtract(
            math_ops.negative(math_ops.multiply(y, math_ops.log(p + epsilon))),
            math_ops.multiply(1.0 - y, math_ops.log(1.0 - p + epsilon)))
    return _pointwise("log_loss", "predictions", labels, predictions, weights, scope,
                      loss_collection, reduction, element_losses)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=ops.GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    def element_losses(y, x):
        signs = math_ops.subtract(math_ops.multiply(y, 2.0), 1.0)  # {0, 1} -> {-1, 1}
        return nn_ops.relu(math_ops.subtract(1.0, math_ops.multiply(signs, x)))
    return _pointwise("hinge_loss", "logits", labels, logits, weights, scope, loss_collection,
                      reduction, element_losses)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None,
                    loss_collection=ops.GraphKeys.LOSSES,
                    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, dim=None):
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("You must specify 'axis'.")
    _check(labels, predictions, "predictions")
    with ops.name_scope(scope, "cosine_distance_loss", (predictions, labels, weights)) as scope:
        labels, predictions = _prepared(labels, predictions)
        radial = math_ops.multiply(predictions, labels)
        losses = math_ops.subtract(1.0, math_ops.reduce_sum(radial, axis=[axis], keepdims=True))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None,
                                loss_collection=ops.GraphKeys.LOSSES):
    _check(labels, predictions, "predictions")
    with ops.name_scope(scope, "mean_pairwise_squared_error", (predictions, labels, weights)):
        labels, predictions = _prepared(labels, predictions)
        weights = math_ops.to_float(convert_to_tensor(weights))
        diffs = math_ops.subtract(predictions, labels)
        if diffs.shape.ndims is None:
            raise ValueError("mean_pairwise_squared_error needs predictions of known rank")
        axis = list(range(1, diffs.shape.ndims))
        sum_squares = math_ops.reduce_sum(math_ops.square(diffs), axis=axis, keepdims=True)
        num_present = _num_present(diffs, weights, per_batch=True)
        term1 = math_ops.multiply(2.0, _div_no_nan(
            sum_squares, math_ops.maximum(num_present - 1.0, 0.0), "value"))
        sum_diff = math_ops.reduce_sum(diffs, axis=axis, keepdims=True)
        term2 = math_ops.multiply(2.0, _div_no_nan(
            math_ops.square(sum_diff),
            math_ops.maximum(math_ops.multiply(num_present, num_present - 1.0), 0.0), "value"))
        loss = math_ops.reduce_sum(math_ops.multiply(term1 - term2, weights))
        mean_loss = array_ops.where(math_ops.reduce_sum(num_present) > 0.0, loss,
                                    array_ops.zeros_like(loss), name="value")
        add_loss(mean_loss, loss_collection)
        return mean_loss


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0,
                          scope=None, loss_collection=ops.GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _check(multi_class_labels, logits, "logits")
    with ops.name_scope(scope, "sigmoid_cross_entropy_loss",
                        (logits, multi_class_labels, weights)) as scope:
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(multi_class_labels, logits.dtype)
        _same_shape(logits, labels)
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                          name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=ops.GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _check(onehot_labels, logits, "logits")
    with ops.name_scope(scope, "softmax_cross_entropy_loss",
                        (logits, onehot_labels, weights)) as scope:
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(onehot_labels, logits.dtype)
        _same_shape(logits, labels)
        if label_smoothing > 0:
            num_classes = math_ops.cast(array_ops.shape(labels)[-1], logits.dtype)
            labels = labels * (1 - label_smoothing) + label_smoothing / num_classes
        losses = nn_ops.softmax_cross_entropy_with_logits_v2(
            labels=array_ops.stop_gradient(labels), logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=ops.GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _check(labels, logits, "logits")
    with ops.name_scope(scope, "sparse_softmax_cross_entropy_loss",
                        (logits, labels, weights)) as scope:
        logits = convert_to_tensor(logits)
        labels = convert_to_tensor(labels)
        # Labels of shape [batch, 1] next to logits [batch, classes] lose their last
        # dimension, as TF's _remove_squeezable_dimensions does.
        if (labels.shape.ndims is not None and logits.shape.ndims is not None and
                labels.shape.ndims == logits.shape.ndims):
            labels = array_ops.reshape(labels, [-1])
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                                 name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)
