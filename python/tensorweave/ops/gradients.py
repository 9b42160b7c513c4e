"""tf.gradients over the C++ gradients driver (tensorweave/train/gradients.h): the nodes
are built by C++ from the registered gradient functions and become Python Operations."""

from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.indexed_slices import IndexedSlices


def _tensor_of(value):
    """A Variable stands for its handle (the gradient with respect to the variable)."""
    handle = getattr(value, "handle", None)
    if handle is not None and hasattr(value, "initializer"):
        return handle
    return convert_to_tensor(value)


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None):
    """The symbolic derivatives of sum(ys) with respect to each of xs: a Tensor, an
    IndexedSlices (through gather), or None where no y depends on the x."""
    ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    if stop_gradients:
        raise NotImplementedError("gradients: stop_gradients is not supported yet")
    y_tensors = [convert_to_tensor(y) for y in ys]
    x_tensors = [_tensor_of(x) for x in xs]
    graph = y_tensors[0].graph
    seeds = []
    if grad_ys is not None:
        grad_ys = list(grad_ys) if isinstance(grad_ys, (list, tuple)) else [grad_ys]
        if len(grad_ys) != len(ys):
            raise ValueError("Passed %d grad_ys for %d ys" % (len(grad_ys), len(ys)))
        with graph.as_default():
            seeds = [convert_to_tensor(g, dtype=y.dtype) for g, y in zip(grad_ys, y_tensors)]
    # The gradient ops take the device the current device scopes (and device functions,
    # asked about an op of type "Gradients") give.
    with graph._native_building(name, "Gradients") as device:
        results = graph._native.gradients([y._native_ref for y in y_tensors],
                                          [x._native_ref for x in x_tensors],
                                          [s._native_ref for s in seeds], device)
    out = []
    for result in results:
        if result is None:
            out.append(None)
        elif result[0] == "dense":
            out.append(graph._ops[result[1][0]].outputs[result[1][1]])
        else:
            indices, values, dense_shape = (graph._ops[n].outputs[i] for n, i in result[1:])
            out.append(IndexedSlices(values, indices, dense_shape))
    return out
