"""Indexing and selection with TF 1.x's names and signatures: gather_nd, scatter_nd, top_k,
unique, segment sums and boolean_mask, over the C++ ops (src/ops/gather_nd_ops.cc,
topk_ops.cc, selection_ops.cc, segment_ops.cc, gather_scatter_ops.cc)."""

import collections

from tensorweave import raw_ops
from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor


def gather_nd(params, indices, name=None, batch_dims=0):
    if batch_dims != 0:
        raise NotImplementedError("gather_nd: only batch_dims=0 is supported by this runtime")
    return raw_ops.GatherNd(params=convert_to_tensor(params), indices=convert_to_tensor(indices),
                            name=name or "GatherNd")


def scatter_nd(indices, updates, shape, name=None):
    indices = convert_to_tensor(indices)
    return raw_ops.ScatterNd(indices=indices, updates=convert_to_tensor(updates),
                             shape=convert_to_tensor(shape, dtype=indices.dtype),
                             name=name or "ScatterNd")


def top_k(input, k=1, sorted=True, name=None):  # noqa: A002 (TF's names)
    """(values, indices) of the k largest entries of each row (last dimension)."""
    values, indices = raw_ops.TopKV2(input=convert_to_tensor(input),
                                     k=convert_to_tensor(k, dtype=dtypes.int32),
                                     sorted=sorted, name=name or "TopKV2")
    return values, indices


UniqueOutput = collections.namedtuple("Unique", ["y", "idx"])


def unique(x, out_idx=dtypes.int32, name=None):
    """(y, idx): the distinct entries of the vector x in order of first appearance, and for
    each entry of x its position in y (x == gather(y, idx))."""
    y, idx = raw_ops.Unique(x=convert_to_tensor(x), out_idx=dtypes.as_dtype(out_idx),
                            name=name or "Unique")
    return UniqueOutput(y, idx)


def segment_sum(data, segment_ids, name=None):
    return raw_ops.SegmentSum(data=convert_to_tensor(data),
                              segment_ids=convert_to_tensor(segment_ids),
                              name=name or "SegmentSum")


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    return raw_ops.UnsortedSegmentSum(data=convert_to_tensor(data),
                                      segment_ids=convert_to_tensor(segment_ids),
                                      num_segments=convert_to_tensor(num_segments),
                                      name=name or "UnsortedSegmentSum")


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """The elements (or slices) of `tensor` where `mask` is true, as TF composes it: the
    mask's dimensions (starting at `axis`) are flattened into one, and the positions Where
    finds in the flattened mask are gathered."""
    from tensorweave.ops import array_ops
    with ops.name_scope(name):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        ndims_mask = mask.shape.ndims
        if ndims_mask is None:
            raise ValueError("Number of mask dimensions must be specified, even if some "
                             "dimensions are None.  E.g. shape=[None] is ok, but shape=None "
                             "is not.")
        if ndims_mask == 0:
            raise ValueError("mask cannot be scalar.")
        axis = 0 if axis is None else axis
        if tensor.shape.ndims is not None and not tensor.shape[axis:axis + ndims_mask] \
                .is_compatible_with(mask.shape):
            raise ValueError("Shapes %s and %s are incompatible" %
                             (tensor.shape[axis:axis + ndims_mask], mask.shape))
        shape = array_ops.shape(tensor)
        leading = shape[:axis]
        rest = shape[axis + ndims_mask:]
        flat_mask = array_ops.reshape(mask, [-1])
        if axis == 0:
            tensor = array_ops.reshape(tensor, array_ops.concat([[-1], rest], 0))
            positions = array_ops.reshape(raw_ops.Where(input=flat_mask, name="Where"), [-1])
            return array_ops.gather(tensor, positions)
        # A later axis: the tensor as [L, N, rest] (L the leading elements), the mask repeated
        # for each of the L rows; Where gives (row, position) pairs for GatherNd.
        from tensorweave.ops import math_ops
        num_leading = math_ops.reduce_prod(leading)
        tensor = array_ops.reshape(tensor, array_ops.concat([[num_leading, -1], rest], 0))
        rows = array_ops.fill(array_ops.stack([num_leading, 1]), 1)
        repeated = math_ops.multiply(rows, math_ops.cast(flat_mask, dtypes.int32)[None, :])
        picked = gather_nd(tensor, raw_ops.Where(input=repeated, name="Where"))
        return array_ops.reshape(picked, array_ops.concat([leading, [-1], rest], 0))
