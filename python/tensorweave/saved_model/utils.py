"""tf.saved_model.utils: TensorInfo, the description of a signature's tensor."""

from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework import tensor_shape


class TensorInfo:
    """TF's TensorInfo message, as a plain object: the graph tensor's `name` ("x:0"), its
    `dtype` (the DataType enum) and `tensor_shape` (a TensorShape)."""

    def __init__(self, name="", dtype=0, tensor_shape=None):
        self.name = name
        self.dtype = dtype
        self.tensor_shape = tensor_shape

    def __repr__(self):
        return "TensorInfo(name=%r, dtype=%s, tensor_shape=%s)" % (
            self.name, dtypes.as_dtype(self.dtype).name if self.dtype else None,
            self.tensor_shape)


def build_tensor_info(tensor):
    """The TensorInfo of a graph tensor (TF's; sparse tensors are not built)."""
    if not isinstance(tensor, ops.Tensor):
        raise TypeError("build_tensor_info takes a Tensor, got %r" % (tensor,))
    return TensorInfo(tensor.name, tensor.dtype.as_datatype_enum,
                      tensor_shape.as_shape(tensor.shape))


def get_tensor_from_tensor_info(tensor_info, graph=None, import_scope=None):
    graph = graph or ops.get_default_graph()
    name = tensor_info.name
    if import_scope:
        name = import_scope + "/" + name
    return graph.get_tensor_by_name(name)
