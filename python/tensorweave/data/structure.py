"""The components of tf.data elements as the C++ pipeline carries them: a tensor is one
component, a SparseTensor three (indices [n, rank] int64, values [n], dense_shape [rank]
int64), which Batch combines as sparse (its attribute sparse_components,
src/data/transform_datasets.cc). An element's structure is described, as in TF 1.x, by
output_types, output_shapes (a SparseTensor's dense shape) and output_classes (ops.Tensor
or SparseTensor for each leaf)."""

from tensorweave.data import nest
from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework import sparse_tensor
from tensorweave.framework import tensor_shape


def is_sparse_class(cls):
    return isinstance(cls, type) and issubclass(cls, sparse_tensor.SparseTensor)


def classes_or_default(classes, types):
    """`classes`, or ops.Tensor for every leaf of `types` when None."""
    if classes is None:
        return nest.map_structure(lambda _: ops.Tensor, types)
    return classes


def classes_of(structure):
    """The class of each leaf of a structure of tensors and SparseTensors."""
    return nest.map_structure(
        lambda v: sparse_tensor.SparseTensor if isinstance(v, sparse_tensor.SparseTensor)
        else ops.Tensor, structure)


def _sparse_shapes(shape):
    rank = shape.ndims
    return [tensor_shape.TensorShape([None, rank]), tensor_shape.TensorShape([None]),
            tensor_shape.TensorShape([rank])]


def wire_types(types, classes):
    """The components' dtypes, in order."""
    out = []
    for t, c in zip(nest.flatten(types), nest.flatten(classes)):
        out.extend([dtypes.int64, t, dtypes.int64] if is_sparse_class(c) else [t])
    return out


def wire_shapes(shapes, classes):
    """The components' static shapes, in order."""
    out = []
    for s, c in zip(nest.flatten(shapes), nest.flatten(classes)):
        out.extend(_sparse_shapes(s) if is_sparse_class(c) else [s])
    return out


def sparse_components(classes):
    """The position of each SparseTensor's first component (its indices)."""
    out, at = [], 0
    for c in nest.flatten(classes):
        if is_sparse_class(c):
            out.append(at)
            at += 3
        else:
            at += 1
    return out


def to_wire(structure):
    """The components of a structure of tensors and SparseTensors, in order."""
    out = []
    for v in nest.flatten(structure):
        if isinstance(v, sparse_tensor.SparseTensor):
            out.extend([v.indices, v.values, v.dense_shape])
        else:
            out.append(v)
    return out


def from_wire(structure, classes, components):
    """The element of `structure` (types or shapes: only its nesting counts) whose
    components are `components`: SparseTensors rebuilt from their three."""
    components, leaves = list(components), []
    for c in nest.flatten(classes):
        if is_sparse_class(c):
            leaves.append(sparse_tensor.SparseTensor._from_tensors(*components[:3]))
            components = components[3:]
        else:
            leaves.append(components.pop(0))
    return nest.pack_sequence_as(structure, leaves)


def any_sparse(classes):
    return any(is_sparse_class(c) for c in nest.flatten(classes))
