"""tf.nn's normalizations as TF 1.x composes them: fused_batch_norm (the C++ FusedBatchNormV3
op, src/ops/batch_norm_ops.cc), batch_normalization (TF's formula over element-wise ops) and
moments (the mean and the variance around the mean, with the mean's gradient stopped)."""

from tensorweave import raw_ops
from tensorweave.framework import ops
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops import math_ops


def _rsqrt(x):
    """1 / sqrt(x): the Rsqrt op where the registry has it, else its composition."""
    rsqrt = getattr(raw_ops, "Rsqrt", None)
    if rsqrt is not None:
        return rsqrt(x=x, name="Rsqrt")
    return math_ops.divide(constant(1, dtype=x.dtype), math_ops.sqrt(x))


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None):
    """(y, batch_mean, batch_variance) of a FusedBatchNormV3 node over 4-D x. Training:
    mean and variance must be None (the batch's statistics are used; batch_variance is
    Bessel-corrected, as TF). Inference: the given mean and variance."""
    x = convert_to_tensor(x, name="input")
    scale = convert_to_tensor(scale, name="scale")
    offset = convert_to_tensor(offset, name="offset")
    if is_training:
        if mean is not None or variance is not None:
            raise ValueError("Both 'mean' and 'variance' must be None if is_training is True.")
    elif mean is None or variance is None:
        raise ValueError("Both 'mean' and 'variance' must be a 1D tensor when is_training "
                         "is False.")
    # The per-channel tensors have x's type here (TF: float32 for every x).
    if mean is None:
        mean = constant([], dtype=scale.dtype)
    if variance is None:
        variance = constant([], dtype=scale.dtype)
    # TF's minimum epsilon (cuDNN's requirement, kept so results agree with TF's).
    epsilon = epsilon if epsilon > 1.001e-5 else 1.001e-5
    y, batch_mean, batch_var, _, _, _ = raw_ops.FusedBatchNormV3(
        x=x, scale=scale, offset=offset, mean=mean, variance=variance, epsilon=float(epsilon),
        data_format=data_format, is_training=is_training, name=name or "FusedBatchNormV3")
    return y, batch_mean, batch_var


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """TF's composite: x * inv + (offset - mean * inv), inv = scale * rsqrt(variance + eps);
    the statistics broadcast against x."""
    with ops.name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = convert_to_tensor(x)
        inv = _rsqrt(math_ops.add(variance, variance_epsilon))
        if scale is not None:
            inv = math_ops.multiply(inv, scale)
        inv = math_ops.cast(inv, x.dtype)
        if offset is not None:
            shift = math_ops.subtract(offset, math_ops.multiply(mean, inv))
        else:
            shift = math_ops.negative(math_ops.multiply(mean, inv))
        return math_ops.add(math_ops.multiply(x, inv), math_ops.cast(shift, x.dtype))


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """(mean, variance) of x over `axes`, as TF computes them: the mean, then the mean of
    the squared differences from it (no gradient through that mean)."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with ops.name_scope(name, "moments", [x, axes]):
        x = convert_to_tensor(x)
        axes = list(axes) if isinstance(axes, (list, tuple)) else axes
        mean = math_ops.reduce_mean(x, axes, keepdims=True, name="mean")
        diff = math_ops.subtract(x, array_ops.stop_gradient(mean))
        variance = math_ops.reduce_mean(math_ops.square(diff), axes, keepdims=keep,
                                        name="variance")
        if not keep:
            mean = array_ops.reshape(mean, array_ops.shape(variance), name="Squeeze")
        return mean, variance


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x * rsqrt(max(sum(x^2, axis), epsilon)), as TF."""
    axis = dim if axis is None else axis
    with ops.name_scope(name, "l2_normalize", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        square_sum = math_ops.reduce_sum(math_ops.square(x), axis, keepdims=True)
        inv = _rsqrt(math_ops.maximum(square_sum, constant(epsilon, dtype=x.dtype)))
        return math_ops.multiply(x, inv, name=scope)



def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5,  # noqa: A002
                                 name=None):
    """input / (bias + alpha * sum of squares over depth[d - r .. d + r])^beta (the LRN op)."""
    return raw_ops.LRN(input=input, depth_radius=int(depth_radius), bias=float(bias),
                       alpha=float(alpha), beta=float(beta), name=name or "LRN")


lrn = local_response_normalization
