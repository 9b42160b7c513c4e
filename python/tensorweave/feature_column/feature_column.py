"""tf.feature_column as TF 1.x's: numeric_column, bucketized_column, the categorical
columns with an identity, a vocabulary list or file, or hash buckets, and the dense
columns made of those (indicator_column, embedding_column), with input_layer (each
column's dense tensor, columns ordered by name, concatenated). Variable names are TF's
(`input_layer/<key>_embedding/embedding_weights`), so checkpoints match, and hash buckets
are TF's (FarmHash fingerprints, the StringToHashBucketFast op), so hashed ids match too.

Categorical inputs are dense tensors of ids or values ([batch] or [batch, n]; -1, "" or a
value not in the vocabulary without oov buckets drops an entry), as numpy_input_fn and
parsed FixedLenFeatures give them, or SparseTensors (a VarLenFeature, any number of
entries per example). A vocabulary file is read when the column is made, where the graph
is built (TensorFlow reads it when its table is initialized, on the task that holds it).
linear_model gives a linear model of the columns (sparse weight rows for the categorical
ones), as the linear estimators use it; crossed_column hashes crosses as TF's SparseCross.
Integer values are hashed by their decimal text (as_string), as TF hashes them."""

import collections

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework import sparse_tensor
from tensorweave.framework.constant_op import convert_to_tensor


def _tf():
    import tensorweave.compat.v1 as tf  # the ops, by their TF names
    return tf


def _not_built(what):
    return NotImplementedError("%s is not in tensorweave yet, and no open issue brings it"
                               % what)


# ---- columns ----

class NumericColumn(collections.namedtuple(
        "NumericColumn", ["key", "shape", "default_value", "dtype", "normalizer_fn"])):
    """A dense feature of fixed shape."""

    @property
    def name(self):
        return self.key


class BucketizedColumn(collections.namedtuple("BucketizedColumn",
                                              ["source_column", "boundaries"])):
    """A numeric column's values as the index of their bucket among `boundaries`."""

    @property
    def name(self):
        return self.source_column.name + "_bucketized"

    @property
    def num_buckets(self):
        return (len(self.boundaries) + 1) * int(np.prod(self.source_column.shape))


class IdentityCategoricalColumn(collections.namedtuple(
        "IdentityCategoricalColumn", ["key", "number_buckets", "default_value"])):
    name = property(lambda self: self.key)
    num_buckets = property(lambda self: self.number_buckets)


class VocabularyListCategoricalColumn(collections.namedtuple(
        "VocabularyListCategoricalColumn",
        ["key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets"])):
    name = property(lambda self: self.key)
    num_buckets = property(lambda self: len(self.vocabulary_list) + self.num_oov_buckets)


class VocabularyFileCategoricalColumn(collections.namedtuple(
        "VocabularyFileCategoricalColumn",
        ["key", "vocabulary_file", "vocabulary_size", "num_oov_buckets", "dtype",
         "default_value", "vocabulary_list"])):
    """A vocabulary list read from a file (one entry per line) when the column is made."""
    name = property(lambda self: self.key)
    num_buckets = property(lambda self: self.vocabulary_size + self.num_oov_buckets)


class HashedCategoricalColumn(collections.namedtuple(
        "HashedCategoricalColumn", ["key", "hash_bucket_size", "dtype"])):
    """Each value's id: its FarmHash fingerprint modulo hash_bucket_size, as TF's."""
    name = property(lambda self: self.key)
    num_buckets = property(lambda self: self.hash_bucket_size)


class CrossedColumn(collections.namedtuple("CrossedColumn",
                                           ["keys", "hash_bucket_size", "hash_key"])):
    """The hashed crosses of features (raw ones by name, or categorical columns' ids), as
    TF's crossed_column: TF's ids exactly (the SparseCross op's hashing)."""

    @property
    def name(self):
        return "_X_".join(sorted(k if isinstance(k, str) else k.name for k in self.keys))

    num_buckets = property(lambda self: self.hash_bucket_size)


class IndicatorColumn(collections.namedtuple("IndicatorColumn", ["categorical_column"])):
    """A categorical column as counts of its ids: [batch, num_buckets]."""

    @property
    def name(self):
        return self.categorical_column.name + "_indicator"


class EmbeddingColumn(collections.namedtuple(
        "EmbeddingColumn", ["categorical_column", "dimension", "combiner", "initializer",
                            "trainable", "ckpt_to_load_from", "tensor_name_in_ckpt"])):
    """A categorical column's ids as learned vectors, combined per example; initialized
    from tensor_name_in_ckpt of the checkpoint ckpt_to_load_from when given (TF's)."""

    @property
    def name(self):
        return self.categorical_column.name + "_embedding"


_CATEGORICAL = (BucketizedColumn, IdentityCategoricalColumn, VocabularyListCategoricalColumn,
                VocabularyFileCategoricalColumn, HashedCategoricalColumn, CrossedColumn)
_VOCABULARY = (VocabularyListCategoricalColumn, VocabularyFileCategoricalColumn)


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


def bucketized_column(source_column, boundaries):
    if not isinstance(source_column, NumericColumn):
        raise ValueError("source_column must be a column generated with numeric_column(). "
                         "Given: %r" % (source_column,))
    boundaries = [float(b) for b in boundaries]
    if not boundaries or any(a >= b for a, b in zip(boundaries, boundaries[1:])):
        raise ValueError("boundaries must be a sorted list.")
    return BucketizedColumn(source_column, tuple(boundaries))


def categorical_column_with_identity(key, num_buckets, default_value=None):
    if num_buckets < 1:
        raise ValueError("num_buckets %s < 1, column_name %s" % (num_buckets, key))
    if default_value is not None and not 0 <= default_value < num_buckets:
        raise ValueError("default_value %s not in range [0, %s), column_name %s" %
                         (default_value, num_buckets, key))
    return IdentityCategoricalColumn(key, int(num_buckets), default_value)


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None,
                                            default_value=-1, num_oov_buckets=0):
    vocabulary_list = list(vocabulary_list)
    if not vocabulary_list:
        raise ValueError("vocabulary_list %s must be non-empty, column_name: %s" %
                         (vocabulary_list, key))
    if len(set(vocabulary_list)) != len(vocabulary_list):
        raise ValueError("Duplicate keys in vocabulary_list %s, column_name: %s" %
                         (vocabulary_list, key))
    if dtype is None:
        dtype = dtypes.string if isinstance(vocabulary_list[0], (str, bytes)) else dtypes.int64
    dtype = dtypes.as_dtype(dtype)
    if num_oov_buckets and default_value != -1:
        raise ValueError("Can't specify both num_oov_buckets and default_value in %s." % key)
    _check_oov(key, num_oov_buckets, default_value, dtype)
    return VocabularyListCategoricalColumn(key, tuple(vocabulary_list), dtype, default_value,
                                           int(num_oov_buckets))


def categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None,
                                            num_oov_buckets=0, default_value=None,
                                            dtype=dtypes.string):
    """The vocabulary is the file's lines (the first vocabulary_size), read now."""
    if not vocabulary_file:
        raise ValueError("Missing vocabulary_file in %s." % key)
    if vocabulary_size is not None and vocabulary_size < 1:
        raise ValueError("Invalid vocabulary_size in %s." % key)
    if num_oov_buckets and default_value is not None:
        raise ValueError("Can't specify both num_oov_buckets and default_value in %s." % key)
    dtype = dtypes.as_dtype(dtype)
    _check_oov(key, num_oov_buckets, default_value, dtype)
    from tensorweave.platform import gfile
    with gfile.GFile(vocabulary_file, "r") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if vocabulary_size is None:
        vocabulary_size = len(lines)
    elif len(lines) < vocabulary_size:
        raise ValueError("Invalid vocab_size in %s: vocabulary_size %d is larger than the %d "
                         "lines of %s." % (key, vocabulary_size, len(lines), vocabulary_file))
    entries = lines[:vocabulary_size]
    if dtype.is_integer:
        entries = [int(e) for e in entries]
    return VocabularyFileCategoricalColumn(
        key, vocabulary_file, int(vocabulary_size), int(num_oov_buckets), dtype,
        -1 if default_value is None else default_value, tuple(entries))


def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=dtypes.string):
    if hash_bucket_size is None or hash_bucket_size < 1:
        raise ValueError("hash_bucket_size must be set. key: %s" % key)
    dtype = dtypes.as_dtype(dtype)
    if dtype != dtypes.string and not dtype.is_integer:
        raise ValueError("dtype must be string or integer. dtype: %s, column_name: %s" %
                         (dtype, key))
    return HashedCategoricalColumn(key, int(hash_bucket_size), dtype)


def crossed_column(keys, hash_bucket_size, hash_key=None):
    """Crosses of `keys`: feature names (their raw values) or categorical columns (their
    ids), hashed into hash_bucket_size buckets as TensorFlow hashes them."""
    if not hash_bucket_size or hash_bucket_size < 1:
        raise ValueError("hash_bucket_size must be > 1. hash_bucket_size: %s" %
                         hash_bucket_size)
    if not keys or len(keys) < 2:
        raise ValueError("keys must be a list with length > 1. Given: %s" % (keys,))
    for key in keys:
        if not isinstance(key, (str,) + _CATEGORICAL):
            raise ValueError("Unsupported key type. All keys must be either string, or "
                             "categorical column except _HashedCategoricalColumn. Given: %s" %
                             (key,))
        if isinstance(key, HashedCategoricalColumn):
            raise ValueError("categorical_column_with_hash_bucket is not supported for "
                             "crossing. Hashing before crossing will increase probability of "
                             "collision. Instead, use the feature name as a string. Given: %s"
                             % (key,))
    return CrossedColumn(tuple(keys), int(hash_bucket_size), hash_key)


def _check_oov(key, num_oov_buckets, default_value, dtype):
    if num_oov_buckets < 0:
        raise ValueError("Invalid num_oov_buckets %s in %s." % (num_oov_buckets, key))


def indicator_column(categorical_column):
    if not isinstance(categorical_column, _CATEGORICAL):
        raise ValueError("Unsupported input type. Input must be a CategoricalColumn. "
                         "Given: %r" % (categorical_column,))
    return IndicatorColumn(categorical_column)


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None,
                     ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                     trainable=True):
    if dimension is None or dimension < 1:
        raise ValueError("Invalid dimension %s." % dimension)
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError("combiner must be one of mean, sqrtn, sum. Given: %s" % combiner)
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or "
                         "none of them.")
    if max_norm is not None:
        raise _not_built("embedding_column's max_norm")
    if not isinstance(categorical_column, _CATEGORICAL):
        raise ValueError("Unsupported input type. Input must be a CategoricalColumn. "
                         "Given: %r" % (categorical_column,))
    return EmbeddingColumn(categorical_column, int(dimension), combiner, initializer, trainable,
                           ckpt_to_load_from, tensor_name_in_ckpt)


# ---- tensors ----

def _feature(features, key, sparse_ok=False):
    """The input of `key`: a tensor, or a SparseTensor where `sparse_ok`."""
    if key not in features:
        raise ValueError("The feature %s is not in features dictionary." % key)
    value = features[key]
    if isinstance(value, sparse_tensor.SparseTensorValue):
        value = sparse_tensor.SparseTensor.from_value(value)
    if isinstance(value, sparse_tensor.SparseTensor):
        if not sparse_ok:
            raise ValueError("The corresponding Tensor of numerical column must be a Tensor. "
                             "SparseTensor is not supported. key: %s" % key)
        return value
    return convert_to_tensor(value)


def _numeric(column, features):
    tf = _tf()
    value = tf.cast(_feature(features, column.key), dtypes.float32)
    if column.normalizer_fn is not None:
        value = column.normalizer_fn(value)
    return tf.reshape(value, [-1, int(np.prod(column.shape))])


class _Ids(collections.namedtuple("_Ids", ["values", "rows", "batch"])):
    """A categorical column's entries, flat: values[i] (an id in [0, num_buckets), or -1
    for a dropped entry) belongs to example rows[i] of `batch`. Dense [batch, n] inputs
    and SparseTensor ones (a VarLenFeature) both come to this."""


def _flat(dense_ids):
    """_Ids of a dense [batch, n] int64 tensor of ids."""
    tf = _tf()
    shape = tf.shape(dense_ids, out_type=dtypes.int64)
    rows = tf.tile(tf.expand_dims(tf.range(shape[0]), 1), tf.stack([1, shape[1]]))
    return _Ids(tf.reshape(dense_ids, [-1]), tf.reshape(rows, [-1]), shape[0])


def _lookup(column, values):
    """Ids of `values` (any shape) for an identity or vocabulary-list column."""
    tf = _tf()
    if isinstance(column, IdentityCategoricalColumn):
        ids = tf.cast(values, dtypes.int64)
        in_range = tf.logical_and(tf.greater_equal(ids, 0), tf.less(ids, column.num_buckets))
        missing = tf.less(ids, 0)
        if column.default_value is not None:
            fallback = tf.fill(tf.shape(ids), tf.constant(column.default_value, dtypes.int64))
            return tf.where(in_range, ids, tf.where(missing, -tf.ones_like(ids), fallback))
        check = tf.assert_less(ids, tf.constant(column.num_buckets, dtypes.int64), message=(
            "%s: an id is not in [0, %d) and the column has no default_value" %
            (column.key, column.num_buckets)))
        with ops.control_dependencies([check]):
            return tf.identity(ids)
    if isinstance(column, HashedCategoricalColumn):
        if values.dtype != dtypes.string:  # TF hashes an integer's decimal text
            ids = tf.string_to_hash_bucket_fast(tf.as_string(values), column.hash_bucket_size)
            return tf.where(tf.equal(values, -1), -tf.ones_like(ids), ids)  # -1: no value
        return _drop_empty(values, tf.string_to_hash_bucket_fast(values,
                                                                 column.hash_bucket_size))
    vocabulary = tf.constant(list(column.vocabulary_list), dtype=column.dtype)
    values = values if values.dtype == column.dtype else tf.cast(values, column.dtype)
    equal = tf.equal(tf.expand_dims(values, -1), vocabulary)
    found = tf.reduce_any(equal, -1)
    index = tf.argmax(tf.cast(equal, dtypes.int32), -1)
    if column.num_oov_buckets:
        # A value not in the vocabulary goes to one of the oov buckets after it, by its
        # hash, as TF's lookup table with hash buckets does.
        text = values if values.dtype == dtypes.string else tf.as_string(values)
        fallback = len(column.vocabulary_list) + tf.string_to_hash_bucket_fast(
            text, column.num_oov_buckets)
        if values.dtype != dtypes.string:
            return tf.where(tf.equal(values, -1), -tf.ones_like(index),
                            tf.where(found, index, fallback))
        return _drop_empty(values, tf.where(found, index, fallback))
    fallback = tf.fill(tf.shape(index), tf.constant(column.default_value, dtypes.int64))
    return tf.where(found, index, fallback)


def _drop_empty(values, ids):
    """-1 (a dropped entry) where a dense string input is empty, as TF drops ''."""
    tf = _tf()
    return tf.where(tf.equal(values, ""), -tf.ones_like(ids), ids)


def _buckets(column, features):
    """[batch, width] int64: each value's bucket among a bucketized column's boundaries."""
    tf = _tf()
    values = _numeric(column.source_column, features)
    return tf.reduce_sum(tf.cast(tf.greater_equal(
        tf.expand_dims(values, -1), tf.constant(list(column.boundaries))), dtypes.int64), -1)


def _leaf_keys(column):
    """A crossed column's keys, nested crossed columns flattened (as TF's)."""
    for key in column.keys:
        if isinstance(key, CrossedColumn):
            yield from _leaf_keys(key)
        else:
            yield key


def _crossed_ids(column, features):
    tf = _tf()
    inputs = []
    for key in _leaf_keys(column):
        if isinstance(key, str):
            raw = _feature(features, key, sparse_ok=True)
            if not isinstance(raw, sparse_tensor.SparseTensor) and raw.shape.ndims == 1:
                raw = tf.expand_dims(raw, 1)
            inputs.append(raw)
            continue
        # A categorical column's ids, dropped entries left out, as a sparse tensor.
        ids = _ids(key, features)
        keep = tf.reshape(tf.where(tf.greater_equal(ids.values, 0)), [-1])
        values = tf.gather(ids.values, keep)
        count = tf.size(values, out_type=dtypes.int64)
        indices = tf.stack([tf.gather(ids.rows, keep), tf.range(count)], 1)
        inputs.append(sparse_tensor.SparseTensor(indices, values,
                                                 tf.stack([ids.batch, count])))
    crossed = tf.sparse.cross_hashed(inputs, num_buckets=column.hash_bucket_size,
                                     hash_key=column.hash_key)
    return _Ids(crossed.values, crossed.indices[:, 0], crossed.dense_shape[0])


def _ids(column, features):
    tf = _tf()
    if isinstance(column, CrossedColumn):
        return _crossed_ids(column, features)
    if isinstance(column, BucketizedColumn):  # dimension i's buckets come i-th
        width = int(np.prod(column.source_column.shape))
        offsets = tf.constant([i * (len(column.boundaries) + 1) for i in range(width)],
                              dtype=dtypes.int64)
        return _flat(_buckets(column, features) + offsets)
    raw = _feature(features, column.key, sparse_ok=True)
    if isinstance(raw, sparse_tensor.SparseTensor):
        return _Ids(_lookup(column, raw.values), raw.indices[:, 0], raw.dense_shape[0])
    if raw.shape.ndims == 1:
        raw = tf.expand_dims(raw, 1)
    return _flat(_lookup(column, raw))


def _per_example(values, ids):
    """[batch, ...]: the sum of `values` (one per entry of `ids`) over each example."""
    tf = _tf()
    return tf.unsorted_segment_sum(values, ids.rows, ids.batch)


def _dense(column, features):
    """The [batch, width] float tensor of a dense column."""
    tf = _tf()
    if isinstance(column, NumericColumn):
        return _numeric(column, features)
    if isinstance(column, BucketizedColumn):  # a one-hot per dimension, as TF
        buckets = len(column.boundaries) + 1
        width = int(np.prod(column.source_column.shape))
        return tf.reshape(tf.one_hot(_buckets(column, features), buckets), [-1, width * buckets])
    if isinstance(column, IndicatorColumn):
        ids = _ids(column.categorical_column, features)
        # one_hot of -1 is a zero row: dropped entries count nothing.
        return _per_example(tf.one_hot(ids.values, column.categorical_column.num_buckets), ids)
    if isinstance(column, EmbeddingColumn):
        return _embedded(column, features)
    if isinstance(column, _CATEGORICAL[1:]):
        raise ValueError("Items of feature_columns must be a _DenseColumn. You can wrap a "
                         "categorical column with an embedding_column or indicator_column. "
                         "Given: %r" % (column,))
    raise ValueError("Items of feature_columns must be a feature column. Given: %r" %
                     (column,))


def _embedded(column, features):
    tf = _tf()
    buckets = column.categorical_column.num_buckets
    initializer = column.initializer or tf.truncated_normal_initializer(
        mean=0.0, stddev=1.0 / np.sqrt(column.dimension))
    weights = tf.get_variable("embedding_weights", [buckets, column.dimension],
                              initializer=initializer, trainable=column.trainable)
    if column.ckpt_to_load_from is not None:  # its initializer reads the checkpoint
        tf.train.init_from_checkpoint(column.ckpt_to_load_from,
                                      {column.tensor_name_in_ckpt: weights})
    ids = _ids(column.categorical_column, features)
    valid = tf.cast(tf.greater_equal(ids.values, 0), dtypes.float32)
    vectors = tf.nn.embedding_lookup(weights, tf.maximum(ids.values, 0)) * tf.expand_dims(
        valid, -1)
    total = _per_example(vectors, ids)
    if column.combiner == "sum":
        return total
    count = tf.expand_dims(_per_example(valid, ids), -1)
    if column.combiner == "mean":
        return total / tf.maximum(count, 1.0)
    return total / tf.maximum(tf.sqrt(count), 1.0)


def input_layer(features, feature_columns, weight_collections=None, trainable=True,
                cols_to_vars=None):
    """[batch, total width]: each column's dense tensor, columns sorted by name."""
    tf = _tf()
    columns = list(feature_columns) if isinstance(feature_columns, (list, tuple)) else [
        feature_columns]
    if not columns:
        raise ValueError("feature_columns must not be empty.")
    with tf.variable_scope(None, default_name="input_layer"):
        tensors = []
        for column in sorted(columns, key=lambda c: getattr(c, "name", "")):
            with tf.variable_scope(None, default_name=column.name):
                tensors.append(_dense(column, features))
            if cols_to_vars is not None:
                cols_to_vars[column] = []
        return tensors[0] if len(tensors) == 1 else tf.concat(tensors, 1)


def linear_model(features, feature_columns, units=1, sparse_combiner="sum",
                 weight_collections=None, trainable=True, cols_to_vars=None):
    """[batch, units]: a weighted sum of the columns plus a bias, as TF 1.x's linear_model.
    A categorical column (bucketized too) has a weight row per bucket, summed over each
    example's ids (sparse_combiner 'sum', 'mean' or 'sqrtn'), so its gradient touches
    only the rows seen; a dense column is multiplied by its weights. TF's variable names:
    linear_model/<column>/weights and linear_model/bias_weights, all zeros at first."""
    tf = _tf()
    if sparse_combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError("sparse_combiner must be one of 'mean', 'sqrtn' or 'sum'. Given: %s"
                         % sparse_combiner)
    columns = list(feature_columns) if isinstance(feature_columns, (list, tuple)) else [
        feature_columns]
    if not columns:
        raise ValueError("feature_columns must not be empty.")
    collections_ = None if weight_collections is None else (
        list(weight_collections) + [ops.GraphKeys.GLOBAL_VARIABLES])
    zeros = tf.zeros_initializer()
    with tf.variable_scope(None, default_name="linear_model"):
        sums = []
        for column in sorted(columns, key=lambda c: getattr(c, "name", "")):
            with tf.variable_scope(None, default_name=column.name):
                if isinstance(column, _CATEGORICAL):
                    weights = tf.get_variable("weights", [column.num_buckets, units],
                                              initializer=zeros, trainable=trainable,
                                              collections=collections_)
                    sums.append(_sparse_weighted_sum(column, features, weights,
                                                     sparse_combiner))
                else:
                    dense = _dense(column, features)
                    weights = tf.get_variable("weights", [int(dense.shape[1]), units],
                                              initializer=zeros, trainable=trainable,
                                              collections=collections_)
                    sums.append(tf.matmul(dense, weights))
            if cols_to_vars is not None:
                cols_to_vars[column] = [weights]
        no_bias = sums[0] if len(sums) == 1 else tf.add_n(sums, name="weighted_sum_no_bias")
        bias = tf.get_variable("bias_weights", [units], initializer=zeros, trainable=trainable,
                               collections=collections_)
        if cols_to_vars is not None:
            cols_to_vars["bias"] = [bias]
        return tf.nn.bias_add(no_bias, bias, name="weighted_sum")


def _sparse_weighted_sum(column, features, weights, combiner):
    """[batch, units]: the weight rows of each example's ids, combined."""
    tf = _tf()
    ids = _ids(column, features)
    valid = tf.cast(tf.greater_equal(ids.values, 0), dtypes.float32)
    rows = tf.gather(weights, tf.maximum(ids.values, 0)) * tf.expand_dims(valid, -1)
    total = _per_example(rows, ids)
    if combiner == "sum":
        return total
    count = tf.expand_dims(_per_example(valid, ids), -1)
    if combiner == "mean":
        return total / tf.maximum(count, 1.0)
    return total / tf.maximum(tf.sqrt(count), 1.0)
