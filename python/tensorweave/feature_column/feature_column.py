"""tf.feature_column as TF 1.x's, for dense inputs: numeric_column and input_layer (the
columns' tensors, by column name, flattened and concatenated), which the canned
estimators use. The categorical columns (vocabulary, identity, hash bucket, crossed) and
the embedding and indicator columns over them are not built yet (issue #32)."""

import collections

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework import sparse_tensor
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops import math_ops
from tensorweave.ops import variable_scope


class NumericColumn(collections.namedtuple(
        "NumericColumn", ["key", "shape", "default_value", "dtype", "normalizer_fn"])):
    """A dense feature of fixed shape."""

    @property
    def name(self):
        return self.key


def numeric_column(key, shape=(1,), default_value=None, dtype=dtypes.float32,
                   normalizer_fn=None):
    if not isinstance(key, str):
        raise ValueError("key must be a string. Given: %r" % (key,))
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if not shape or not all(isinstance(d, (int, np.integer)) and d > 0 for d in shape):
        raise ValueError("shape dimensions must be greater than 0. shape: %s, key: %s" %
                         (shape, key))
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise ValueError("dtype must be convertible to float. dtype: %s, key: %s" %
                         (dtype, key))
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError("normalizer_fn must be a callable. Given: %r" % (normalizer_fn,))
    return NumericColumn(key, tuple(int(d) for d in shape), default_value, dtype,
                         normalizer_fn)


def _dense_tensor(column, features):
    if not isinstance(column, NumericColumn):
        raise NotImplementedError("feature column %r: only numeric_column is in tensorweave "
                                  "yet (categorical, embedding and indicator columns: issue "
                                  "#32)" % (column,))
    if column.key not in features:
        raise ValueError("The feature %s is not in features dictionary." % column.key)
    value = features[column.key]
    if isinstance(value, sparse_tensor.SparseTensor):
        raise ValueError("The corresponding Tensor of numerical column must be a Tensor. "
                         "SparseTensor is not supported. key: %s" % column.key)
    value = math_ops.cast(convert_to_tensor(value), dtypes.float32)
    if column.normalizer_fn is not None:
        value = column.normalizer_fn(value)
    return array_ops.reshape(value, [-1, int(np.prod(column.shape))])


def input_layer(features, feature_columns, weight_collections=None, trainable=True,
                cols_to_vars=None):
    """[batch, total width]: each column's tensor flattened, columns sorted by name."""
    columns = list(feature_columns) if not isinstance(
        feature_columns, NumericColumn) else [feature_columns]
    if not columns:
        raise ValueError("feature_columns must not be empty.")
    with variable_scope.variable_scope(None, default_name="input_layer"):
        tensors = []
        for column in sorted(columns, key=lambda c: getattr(c, "name", "")):
            with ops.name_scope(column.name):
                tensors.append(_dense_tensor(column, features))
            if cols_to_vars is not None:
                cols_to_vars[column] = []
        return tensors[0] if len(tensors) == 1 else array_ops.concat(tensors, 1)
