"""TF 1.x's parsing ops: tf.parse_example and parse_single_example with FixedLenFeature,
VarLenFeature and FixedLenSequenceFeature, decode_raw, decode_csv, string_to_number, and
sparse_tensor_to_dense. The parsing is the C++ kernels' (src/ops/parsing_ops.cc); this
module builds their graphs with TensorFlow's signatures."""

import collections

import numpy as np

from tensorweave import raw_ops
from tensorweave.framework import dtypes
from tensorweave.framework import op_def_library
from tensorweave.framework import ops
from tensorweave.framework import sparse_tensor
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops import array_transforms


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any length, parsed into a SparseTensor."""


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """A feature of a fixed shape; required unless it has a default_value."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """Any number of values of `shape`, padded to the batch's longest with default_value."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


_FEATURE_DTYPES = (dtypes.float32, dtypes.int64, dtypes.string)


def _dims(shape):
    shape = tensor_shape.as_shape(shape)
    if shape.dims is None or not shape.is_fully_defined():
        raise ValueError("Shape %s of a feature must be fully defined" % shape)
    return [d.value for d in shape.dims]


def _check_dtype(key, dtype):
    dtype = dtypes.as_dtype(dtype)
    if dtype not in _FEATURE_DTYPES:
        raise ValueError("Unsupported %s for feature %s: a feature is float32, int64 or "
                         "string" % (dtype.name, key))
    return dtype


def _fixed_len(key, feature):
    """A FixedLenFeature's dtype, dimensions and default (an empty array: required)."""
    dtype = _check_dtype(key, feature.dtype)
    dims = _dims(feature.shape)
    if feature.default_value is None:
        return dtype, dims, np.zeros([0], dtype=dtype.as_numpy_dtype)
    return dtype, dims, np.reshape(np.asarray(feature.default_value,
                                              dtype=dtype.as_numpy_dtype), dims)


def parse_example(serialized, features, name=None, example_names=None):
    """Parses a batch of serialized Examples into a dict of Tensors (FixedLenFeature,
    FixedLenSequenceFeature) and SparseTensors (VarLenFeature)."""
    if not features:
        raise ValueError("Missing: features was %s." % features)
    sparse_keys, sparse_types = [], []
    dense_keys, dense_types, dense_shapes, dense_defaults = [], [], [], []
    for key in sorted(features):
        feature = features[key]
        if isinstance(feature, VarLenFeature):
            sparse_keys.append(key)
            sparse_types.append(_check_dtype(key, feature.dtype))
        elif isinstance(feature, FixedLenFeature):
            dtype, dims, default = _fixed_len(key, feature)
            dense_keys.append(key)
            dense_types.append(dtype)
            dense_shapes.append(dims)
            dense_defaults.append(default)
        elif isinstance(feature, FixedLenSequenceFeature):
            if not feature.allow_missing:
                raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing "
                                 "to be True.")
            dtype = _check_dtype(key, feature.dtype)
            dense_keys.append(key)
            dense_types.append(dtype)
            dense_shapes.append([-1] + _dims(feature.shape))
            pad = feature.default_value if feature.default_value is not None else (
                b"" if dtype == dtypes.string else 0)
            dense_defaults.append(np.asarray(pad, dtype=dtype.as_numpy_dtype).reshape([]))
        else:
            raise ValueError("Unsupported feature type %s for %s" % (type(feature).__name__,
                                                                      key))
    with ops.name_scope(name, "ParseExample"):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        names = convert_to_tensor(example_names if example_names is not None else [],
                                  dtype=dtypes.string, name="names")
        op = op_def_library.apply_op(
            "ParseExample", serialized=serialized, names=names,
            sparse_keys=[constant(k, dtype=dtypes.string) for k in sparse_keys],
            dense_keys=[constant(k, dtype=dtypes.string) for k in dense_keys],
            dense_defaults=[constant(d, dtype=t) for d, t in zip(dense_defaults, dense_types)],
            Nsparse=len(sparse_keys), Ndense=len(dense_keys), sparse_types=sparse_types,
            Tdense=dense_types, dense_shapes=dense_shapes, name="ParseExample")
    n = len(sparse_keys)
    out = {}
    for i, key in enumerate(sparse_keys):
        out[key] = sparse_tensor.SparseTensor._from_tensors(
            op.outputs[i], op.outputs[n + i], op.outputs[2 * n + i])
    for i, key in enumerate(dense_keys):
        out[key] = op.outputs[3 * n + i]
    return out


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None,
                                  example_name=None, name=None):
    """Parses one serialized SequenceExample: (context, sequences), dicts of its context
    features (FixedLenFeature: a Tensor of its shape; VarLenFeature: a SparseTensor) and of
    its feature lists (FixedLenSequenceFeature: [steps, shape...], allow_missing giving no
    steps; VarLenFeature: a [steps, longest] SparseTensor), as TF 1.x's."""
    context_features = context_features or {}
    sequence_features = sequence_features or {}
    if not context_features and not sequence_features:
        raise ValueError("Missing features.")
    context_sparse, context_sparse_types = [], []
    context_dense, context_dense_types, context_shapes, context_defaults = [], [], [], []
    for key in sorted(context_features):
        feature = context_features[key]
        if isinstance(feature, VarLenFeature):
            context_sparse.append(key)
            context_sparse_types.append(_check_dtype(key, feature.dtype))
        elif isinstance(feature, FixedLenFeature):
            dtype, dims, default = _fixed_len(key, feature)
            context_dense.append(key)
            context_dense_types.append(dtype)
            context_shapes.append(dims)
            context_defaults.append(default)
        else:
            raise ValueError("Unsupported context feature type %s for %s (VarLenFeature or "
                             "FixedLenFeature)" % (type(feature).__name__, key))
    list_sparse, list_sparse_types = [], []
    list_dense, list_dense_types, list_shapes, missing_ok = [], [], [], []
    for key in sorted(sequence_features):
        feature = sequence_features[key]
        if isinstance(feature, VarLenFeature):
            list_sparse.append(key)
            list_sparse_types.append(_check_dtype(key, feature.dtype))
        elif isinstance(feature, FixedLenSequenceFeature):
            if feature.default_value is not None:
                raise ValueError("FixedLenSequenceFeature of a sequence feature takes no "
                                 "default_value (%s)" % key)
            list_dense.append(key)
            list_dense_types.append(_check_dtype(key, feature.dtype))
            list_shapes.append(_dims(feature.shape))
            if feature.allow_missing:
                missing_ok.append(key)
        else:
            raise ValueError("Unsupported sequence feature type %s for %s "
                             "(VarLenFeature or FixedLenSequenceFeature)" % (
                                 type(feature).__name__, key))

    def keys(names):
        return [constant(k, dtype=dtypes.string) for k in names]

    with ops.name_scope(name, "ParseSingleSequenceExample"):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        op = op_def_library.apply_op(
            "ParseSingleSequenceExample", serialized=serialized,
            feature_list_dense_missing_assumed_empty=constant(
                np.array([k.encode() for k in missing_ok], dtype=object), dtype=dtypes.string),
            context_sparse_keys=keys(context_sparse), context_dense_keys=keys(context_dense),
            feature_list_sparse_keys=keys(list_sparse), feature_list_dense_keys=keys(list_dense),
            context_dense_defaults=[constant(d, dtype=t) for d, t in
                                    zip(context_defaults, context_dense_types)],
            debug_name=constant(example_name or "", dtype=dtypes.string),
            Ncontext_sparse=len(context_sparse), Ncontext_dense=len(context_dense),
            Nfeature_list_sparse=len(list_sparse), Nfeature_list_dense=len(list_dense),
            context_sparse_types=context_sparse_types, Tcontext_dense=context_dense_types,
            feature_list_sparse_types=list_sparse_types,
            feature_list_dense_types=list_dense_types, context_dense_shapes=context_shapes,
            feature_list_dense_shapes=list_shapes, name="ParseSingleSequenceExample")
    outputs, at = op.outputs, 0
    context, sequences = {}, {}
    n = len(context_sparse)
    for i, key in enumerate(context_sparse):
        context[key] = sparse_tensor.SparseTensor._from_tensors(
            outputs[i], outputs[n + i], outputs[2 * n + i])
    at = 3 * n
    for i, key in enumerate(context_dense):
        context[key] = outputs[at + i]
    at += len(context_dense)
    n = len(list_sparse)
    for i, key in enumerate(list_sparse):
        sequences[key] = sparse_tensor.SparseTensor._from_tensors(
            outputs[at + i], outputs[at + n + i], outputs[at + 2 * n + i])
    at += 3 * n
    for i, key in enumerate(list_dense):
        sequences[key] = outputs[at + i]
    return context, sequences


def parse_single_example(serialized, features, name=None, example_names=None):
    """Parses one serialized Example (a scalar string): parse_example of a batch of one, its
    batch dimension removed."""
    with ops.name_scope(name, "ParseSingleExample"):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        batch = array_ops.reshape(serialized, [1], name="serialized_batch")
        names = None
        if example_names is not None:
            names = array_ops.reshape(convert_to_tensor(example_names, dtype=dtypes.string), [1])
        parsed = parse_example(batch, features, example_names=names)
        out = {}
        for key, value in parsed.items():
            if isinstance(value, sparse_tensor.SparseTensor):
                indices = array_ops.slice(value.indices, [0, 1], [-1, 1])
                out[key] = sparse_tensor.SparseTensor._from_tensors(
                    indices, value.values, array_ops.slice(value.dense_shape, [1], [1]))
            else:
                out[key] = array_transforms.squeeze(value, [0], name=key)
        return out


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None, bytes=None):  # noqa: A002
    """The bytes of each string as numbers of out_type, in a new last dimension."""
    if input_bytes is None:
        input_bytes = bytes
    return raw_ops.DecodeRaw(bytes=input_bytes, out_type=dtypes.as_dtype(out_type),
                             little_endian=little_endian, name=name)


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None):
    """One tensor per column of the CSV lines, of the types of record_defaults (each a list
    of one value, or an empty tensor for a required column)."""
    defaults = []
    for i, d in enumerate(record_defaults):
        t = convert_to_tensor(d, name="record_default_%d" % i)
        if t.dtype not in (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64,
                           dtypes.string):
            raise TypeError("record_defaults[%d] is %s; a column is float32, float64, int32, "
                            "int64 or string" % (i, t.dtype.name))
        defaults.append(t)
    out = raw_ops.DecodeCSV(records=records, record_defaults=defaults,
                            OUT_TYPE=[d.dtype for d in defaults], field_delim=field_delim,
                            use_quote_delim=use_quote_delim, na_value=na_value,
                            select_cols=list(select_cols or []), name=name)
    return out if isinstance(out, list) else [out]


def string_to_number(string_tensor, out_type=dtypes.float32, name=None):
    return raw_ops.StringToNumber(string_tensor=string_tensor,
                                  out_type=dtypes.as_dtype(out_type), name=name)


def sparse_tensor_to_dense(sp_input, default_value=0, validate_indices=True, name=None):
    """The dense tensor a SparseTensor stands for, default_value where it has no value."""
    sp_input = sparse_tensor.SparseTensor.from_value(sp_input)
    if sp_input.dtype == dtypes.string and default_value == 0:
        default_value = ""
    return raw_ops.SparseToDense(sparse_indices=sp_input.indices,
                                 output_shape=sp_input.dense_shape,
                                 sparse_values=sp_input.values,
                                 default_value=convert_to_tensor(default_value,
                                                                 dtype=sp_input.dtype),
                                 validate_indices=validate_indices,
                                 name=name or "SparseToDense")


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0,
                    validate_indices=True, name=None):
    values = convert_to_tensor(sparse_values)
    return raw_ops.SparseToDense(sparse_indices=sparse_indices, output_shape=output_shape,
                                 sparse_values=values,
                                 default_value=convert_to_tensor(default_value,
                                                                 dtype=values.dtype),
                                 validate_indices=validate_indices, name=name)
