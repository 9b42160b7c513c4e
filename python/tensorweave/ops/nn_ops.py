"""tf.nn: activations, softmax and its cross-entropies, bias_add, xw_plus_b."""

from tensorweave import raw_ops
from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import math_ops


def relu(features, name=None):
    return raw_ops.Relu(features=features, name=name or "Relu")


def _last_axis_only(logits, axis, what):
    """The runtime's softmax kernels work over the last axis; any other is refused."""
    if axis is None or axis == -1:
        return
    rank = convert_to_tensor(logits).shape.ndims
    if rank is None or axis != rank - 1:
        raise NotImplementedError("%s over axis %r: only the last axis is supported" %
                                  (what, axis))


def softmax(logits, axis=None, name=None, dim=None):
    axis = dim if axis is None else axis
    _last_axis_only(logits, axis, "softmax")
    return raw_ops.Softmax(logits=logits, name=name or "Softmax")


def log_softmax(logits, axis=None, name=None, dim=None):
    axis = dim if axis is None else axis
    _last_axis_only(logits, axis, "log_softmax")
    return raw_ops.LogSoftmax(logits=logits, name=name or "LogSoftmax")


def bias_add(value, bias, data_format=None, name=None):
    """value + bias along the channels: the last dimension (data_format None or "N...C")
    or dimension 1 ("NC..."), as TF."""
    if data_format is None or (data_format.startswith("N") and data_format.endswith("C")):
        data_format = "NHWC"
    elif data_format.startswith("NC"):
        data_format = "NCHW"
    else:
        raise ValueError("data_format must be of the form `N...C` or `NC...`")
    return raw_ops.BiasAdd(value=value, bias=bias, data_format=data_format,
                           name=name or "BiasAdd")


def xw_plus_b(x, weights, biases, name=None):
    with ops.name_scope(name, "xw_plus_b") as scope:
        return bias_add(math_ops.matmul(x, weights), biases, name=scope)


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None,
                                             name=None):
    if _sentinel is not None:
        raise ValueError("Only call `sparse_softmax_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...)")
    loss, _ = raw_ops.SparseSoftmaxCrossEntropyWithLogits(
        features=logits, labels=labels, name=name or "SparseSoftmaxCrossEntropyWithLogits")
    return loss


def softmax_cross_entropy_with_logits_v2(_sentinel=None, labels=None, logits=None, dim=-1,
                                         name=None, axis=None):
    """-sum(labels * log_softmax(logits)) over the class axis (the last one): the
    SoftmaxCrossEntropyWithLogits op on [batch, classes], other ranks flattened to it and
    back, as TF; gradients reach the labels too."""
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits_v2` with named "
                         "arguments (labels=..., logits=..., ...)")
    axis = dim if axis is None else axis
    with ops.name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = math_ops.cast(convert_to_tensor(labels, name="labels"), logits.dtype)
        _last_axis_only(logits, axis, "softmax_cross_entropy_with_logits")
        static = logits.shape
        if static.ndims == 2:
            cost, _ = raw_ops.SoftmaxCrossEntropyWithLogits(features=logits, labels=labels,
                                                            name=scope)
            return cost
        from tensorweave.ops import array_ops
        input_shape = array_ops.shape(logits)
        flat_shape = array_ops.concat([[-1], input_shape[-1:]], 0)
        cost, _ = raw_ops.SoftmaxCrossEntropyWithLogits(
            features=array_ops.reshape(logits, flat_shape),
            labels=array_ops.reshape(labels, flat_shape), name=scope)
        cost = array_ops.reshape(cost, input_shape[:-1])
        if static.ndims is not None:
            cost.set_shape(static.as_list()[:-1])
        return cost


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1,
                                      name=None, axis=None):
    """TF 1.x's deprecated form: as _v2, with no gradient into the labels."""
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...)")
    with ops.name_scope(name, "softmax_cross_entropy_with_logits_sg", [logits, labels]) as sg:
        labels = raw_ops.StopGradient(input=labels, name="labels_stop_gradient")
        return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, dim=dim,
                                                    name=sg, axis=axis)
sigmoid = math_ops.sigmoid
tanh = math_ops.tanh


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """max(x, 0) - x * z + log(1 + exp(-|x|)) per element, as TF computes it (stable for
    large |x|)."""
    if _sentinel is not None:
        raise ValueError("Only call `sigmoid_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=..., ...)")
    with ops.name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, dtype=logits.dtype, name="labels")
        if (logits.shape.ndims is not None and labels.shape.ndims is not None and
                not logits.shape.is_compatible_with(labels.shape)):
            raise ValueError("logits and labels must have the same shape (%s vs %s)" %
                             (logits.shape, labels.shape))
        relu_logits = relu(logits)
        neg_abs_logits = math_ops.negative(math_ops.abs(logits))
        return math_ops.add(
            math_ops.subtract(relu_logits, math_ops.multiply(logits, labels)),
            math_ops.log(math_ops.add(math_ops.exp(neg_abs_logits), 1.0)), name=scope)


def in_top_k(predictions, targets, k, name=None):
    """Whether each target is among the k largest of its row of predictions (the InTopKV2
    op: ties at the boundary are all in, non-finite scores and bad targets are out)."""
    with ops.name_scope(name, "in_top_k"):
        targets = convert_to_tensor(targets)
        k = convert_to_tensor(k, dtype=targets.dtype)
        return raw_ops.InTopKV2(predictions=predictions, targets=targets, k=k,
                                name="InTopKV2")


def l2_loss(t, name=None):
    """sum(t ** 2) / 2: the L2Loss op (its gradient t * grad)."""
    return raw_ops.L2Loss(t=t, name=name or "L2Loss")
