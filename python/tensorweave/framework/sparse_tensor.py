"""SparseTensor: TF 1.x's sparse tensor, three dense tensors (indices [n, rank] int64, values
[n], dense_shape [rank] int64), as parse_example gives a VarLenFeature. Fetched, it is a
SparseTensorValue with numpy arrays."""

import collections

from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor

SparseTensorValue = collections.namedtuple("SparseTensorValue",
                                           ["indices", "values", "dense_shape"])


class SparseTensor:
    def __init__(self, indices, values, dense_shape):
        with ops.name_scope(None, "SparseTensor"):
            self._indices = convert_to_tensor(indices, dtype=dtypes.int64, name="indices")
            self._values = convert_to_tensor(values, name="values")
            self._dense_shape = convert_to_tensor(dense_shape, dtype=dtypes.int64,
                                                  name="dense_shape")

    @classmethod
    def _from_tensors(cls, indices, values, dense_shape):
        """A SparseTensor over tensors that exist already (no new nodes)."""
        self = cls.__new__(cls)
        self._indices, self._values, self._dense_shape = indices, values, dense_shape
        return self

    @classmethod
    def from_value(cls, value):
        if isinstance(value, SparseTensor):
            return value
        return cls(value.indices, value.values, value.dense_shape)

    indices = property(lambda self: self._indices)
    values = property(lambda self: self._values)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)
    op = property(lambda self: self._values.op)
    graph = property(lambda self: self._values.graph)

    @property
    def shape(self):
        """The static shape: known where dense_shape is a constant, else its rank."""
        if self._dense_shape.op.type == "Const":
            return tensor_shape.TensorShape(
                [int(d) for d in self._dense_shape.op.get_attr("value")])
        known = self._dense_shape.shape
        if known.ndims == 1 and known.dims[0].value is not None:
            return tensor_shape.TensorShape([None] * known.dims[0].value)
        return tensor_shape.unknown_shape()

    def get_shape(self):
        return self.shape

    def eval(self, feed_dict=None, session=None):
        session = session or ops.get_default_session()
        return session.run(self, feed_dict=feed_dict)

    def __repr__(self):
        return "SparseTensor(indices=%s, values=%s, dense_shape=%s)" % (
            self._indices, self._values, self._dense_shape)


def is_sparse(x):
    return isinstance(x, (SparseTensor, SparseTensorValue))
