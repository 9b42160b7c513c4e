"""TF 1.x's initializers: callables (shape, dtype, partition_info) -> a Tensor of that
shape, used by get_variable and the layers."""

import math

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.ops import array_ops
from tensorweave.ops import random_ops


class Initializer:
    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        raise NotImplementedError

    def get_config(self):
        return {}

    def _dtype(self, dtype):
        return dtypes.as_dtype(dtype if dtype is not None else self.dtype)


class Zeros(Initializer):
    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.zeros(shape, self._dtype(dtype))


class Ones(Initializer):
    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.ones(shape, self._dtype(dtype))


class Constant(Initializer):
    """Fills with `value`: a scalar, or a list/array. As TF 1.x's (v1) constant_initializer
    without verify_shape: a list with fewer elements than the shape is padded with its last
    element, one with more is a ValueError; with verify_shape its shape must be the
    shape (TypeError)."""

    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        super().__init__(dtype)
        self.value = value
        self._verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        from tensorweave.framework.constant_op import constant
        dtype = self._dtype(dtype)
        if verify_shape is None:
            verify_shape = self._verify_shape
        value = np.asarray(self.value, dtype=dtype.as_numpy_dtype)
        dims = [int(d) for d in shape]
        if verify_shape:
            if list(value.shape) != dims:
                raise TypeError("Expected Tensor's shape: %s, got %s." %
                                (tuple(dims), tuple(value.shape)))
            return constant(value, dtype=dtype)
        if value.ndim == 0:
            return array_ops.fill(dims, constant(value, dtype=dtype))
        needed = int(np.prod(dims)) if dims else 1
        flat = value.reshape(-1)
        if flat.size > needed:
            raise ValueError("Too many elements provided. Needed at most %d, but received %d" %
                             (needed, flat.size))
        if flat.size < needed:
            flat = np.concatenate([flat, np.full(needed - flat.size, flat[-1], flat.dtype)])
        return constant(flat.reshape(dims), dtype=dtype)

    def get_config(self):
        return {"value": self.value, "dtype": self.dtype.name,
                "verify_shape": self._verify_shape}


class RandomUniform(Initializer):
    def __init__(self, minval=0, maxval=None, seed=None, dtype=dtypes.float32):
        super().__init__(dtype)
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_uniform(shape, self.minval, self.maxval, self._dtype(dtype),
                                         seed=self.seed)


class RandomNormal(Initializer):
    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(dtype)
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_normal(shape, self.mean, self.stddev, self._dtype(dtype),
                                        seed=self.seed)


class TruncatedNormal(RandomNormal):
    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.truncated_normal(shape, self.mean, self.stddev, self._dtype(dtype),
                                           seed=self.seed)


def _fans(shape):
    """TF's _compute_fans: (fan_in, fan_out) of a weight shape."""
    shape = [int(d) for d in shape]
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


class VarianceScaling(Initializer):
    """Samples with variance scale / n, n the fan in, out or their average (`mode`), from a
    truncated normal, a normal or a uniform (`distribution`)."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=dtypes.float32):
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError("Invalid `mode` argument:", mode)
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError("Invalid `distribution` argument:", distribution)
        super().__init__(dtype)
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self._dtype(dtype)
        fan_in, fan_out = _fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}
        scale = self.scale / max(1.0, n[self.mode])
        if self.distribution == "truncated_normal":
            # 0.879... is the stddev of a standard normal truncated to (-2, 2).
            stddev = math.sqrt(scale) / 0.87962566103423978
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(scale), dtype,
                                            seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)


def glorot_uniform_initializer(seed=None, dtype=dtypes.float32):
    return VarianceScaling(1.0, "fan_avg", "uniform", seed, dtype)


def glorot_normal_initializer(seed=None, dtype=dtypes.float32):
    return VarianceScaling(1.0, "fan_avg", "truncated_normal", seed, dtype)


def he_normal(seed=None):
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
variance_scaling_initializer = VarianceScaling
