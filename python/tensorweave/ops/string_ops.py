"""TF 1.x's string ops for input pipelines: string_split (tokens as a SparseTensor), substr,
string_join and string_to_hash_bucket_fast, over the C++ kernels (src/ops/string_ops.cc) with TensorFlow's
signatures."""

from tensorweave import raw_ops
from tensorweave.framework import dtypes
from tensorweave.framework import sparse_tensor
from tensorweave.framework.constant_op import convert_to_tensor


def string_split(source, sep=None, skip_empty=True, delimiter=None, result_type="SparseTensor",
                 name=None):
    """Splits each string of the vector `source` at every character of `sep` (a space by
    default; each byte when empty) into a SparseTensor of shape [len(source), most
    tokens]. `delimiter` is TF's older name for `sep`."""
    if result_type != "SparseTensor":
        raise ValueError("string_split: result_type must be 'SparseTensor' (tensorweave has no "
                         "RaggedTensor), got %r" % (result_type,))
    if sep is None:
        sep = " " if delimiter is None else delimiter
    indices, values, shape = raw_ops.StringSplit(
        input=convert_to_tensor(source, dtype=dtypes.string),
        delimiter=convert_to_tensor(sep, dtype=dtypes.string), skip_empty=skip_empty,
        name=name or "StringSplit")
    return sparse_tensor.SparseTensor._from_tensors(indices, values, shape)


def substr(input, pos, len, name=None, unit="BYTE"):  # noqa: A002 (TF's argument names)
    """The substring of each string from `pos` (from the end when negative) of at most
    `len` bytes, or UTF-8 characters with unit="UTF8_CHAR"."""
    pos = convert_to_tensor(pos)
    if pos.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError("substr: pos must be int32 or int64, got %s" % pos.dtype.name)
    return raw_ops.Substr(input=convert_to_tensor(input, dtype=dtypes.string), pos=pos,
                          len=convert_to_tensor(len, dtype=pos.dtype), unit=unit, name=name)


def string_join(inputs, separator="", name=None):
    """The strings of `inputs` joined element by element; scalars join every element."""
    return raw_ops.StringJoin(
        inputs=[convert_to_tensor(i, dtype=dtypes.string) for i in inputs], separator=separator,
        name=name)


def string_to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002 (TF's names)
    """Each string's bucket: its FarmHash fingerprint modulo num_buckets (TF's buckets)."""
    return raw_ops.StringToHashBucketFast(input=input, num_buckets=int(num_buckets), name=name)


_DEFAULT_HASH_KEY = 0xDECAFCAFFE  # TensorFlow's sparse_ops._DEFAULT_HASH_KEY


def _cross(inputs, hashed_output, num_buckets, hash_key, name):
    """SparseCross of `inputs` (SparseTensors and dense [batch, k] tensors, int64 or
    string): sparse inputs first, then dense ones, as TensorFlow orders them."""
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("Inputs must be a list")
    sparse, dense = [], []
    for value in inputs:
        if isinstance(value, sparse_tensor.SparseTensorValue):
            value = sparse_tensor.SparseTensor.from_value(value)
        if isinstance(value, sparse_tensor.SparseTensor):
            sparse.append(value)
        else:
            dense.append(convert_to_tensor(value))
    cast = [s if s.dtype == dtypes.string else sparse_tensor.SparseTensor(
        s.indices, raw_ops.Cast(x=s.values, DstT=dtypes.int64), s.dense_shape) for s in sparse]
    dense = [d if d.dtype in (dtypes.string, dtypes.int64) else raw_ops.Cast(
        x=d, DstT=dtypes.int64) for d in dense]
    out_type = dtypes.int64 if hashed_output else dtypes.string
    indices, values, shape = raw_ops.SparseCross(
        indices=[s.indices for s in cast], values=[s.values for s in cast],
        shapes=[s.dense_shape for s in cast], dense_inputs=dense,
        hashed_output=hashed_output, num_buckets=int(num_buckets),
        hash_key=int(_DEFAULT_HASH_KEY if hash_key is None else hash_key),
        out_type=out_type, internal_type=out_type, name=name)
    return sparse_tensor.SparseTensor(indices, values, shape)


def sparse_cross(inputs, name=None):
    """The crosses of `inputs` per example as strings joined by "_X_" (tf.sparse.cross)."""
    return _cross(inputs, False, 0, 0, name)


def sparse_cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """The crosses of `inputs` per example, hashed as TensorFlow hashes them
    (tf.sparse.cross_hashed): TF's buckets exactly."""
    return _cross(inputs, True, num_buckets, hash_key, name)


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1,  # noqa: A002
              fill="", name=None):
    """Each element as text, formatted as TensorFlow's as_string."""
    return raw_ops.AsString(input=input, precision=int(precision), scientific=bool(scientific),
                            shortest=bool(shortest), width=int(width), fill=fill, name=name)
