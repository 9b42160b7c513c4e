"""The global step: the int64 scalar variable counting training steps, found through the
GLOBAL_STEP collection (or the tensor "global_step:0"), as TF 1.x's training_util."""

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.ops import variables


def get_global_step(graph=None):
    """The global step variable of `graph` (default: the default graph), or None."""
    graph = graph or ops.get_default_graph()
    found = graph.get_collection(ops.GraphKeys.GLOBAL_STEP)
    if len(found) > 1:
        raise TypeError("Multiple tensors in global_step collection.")
    if found:
        step = found[0]
    else:
        # TF finds the tensor "global_step:0", a variable's value there; here a variable's
        # node outputs its handle, so the variable itself stands for it.
        step = _variable_named(graph, ops.GraphKeys.GLOBAL_STEP)
        if step is None:
            try:
                step = graph.get_tensor_by_name("global_step:0")
            except KeyError:
                return None
    if not step.dtype.base_dtype.is_integer:
        raise TypeError("Existing \"global_step\" does not have integer type: %s" % step.dtype)
    if step.get_shape().ndims != 0 and step.get_shape().is_fully_defined():
        raise TypeError("Existing \"global_step\" is not scalar: %s" % step.get_shape())
    return step


def _variable_named(graph, name):
    for collection in (ops.GraphKeys.GLOBAL_VARIABLES, ops.GraphKeys.LOCAL_VARIABLES):
        for v in graph.get_collection(collection):
            if isinstance(v, variables.Variable) and v.op.name == name:
                return v
    return None


def create_global_step(graph=None):
    """Creates "global_step" (int64, 0, not trainable) in GLOBAL_VARIABLES and GLOBAL_STEP.
    ValueError when the graph has one already."""
    graph = graph or ops.get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), graph.name_scope(None):
        return variables.Variable(
            np.int64(0), dtype=dtypes.int64, trainable=False, name=ops.GraphKeys.GLOBAL_STEP,
            collections=[ops.GraphKeys.GLOBAL_VARIABLES, ops.GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph=None):
    graph = graph or ops.get_default_graph()
    return get_global_step(graph) or create_global_step(graph)


def global_step(sess, global_step_tensor):
    """The global step's value as a Python int."""
    return int(sess.run(global_step_tensor))


def assert_global_step(global_step_tensor):
    if not (isinstance(global_step_tensor, (variables.Variable, ops.Tensor))):
        raise TypeError("Existing \"global_step\" must be a Variable or Tensor: %s." %
                        global_step_tensor)
    if not global_step_tensor.dtype.base_dtype.is_integer:
        raise TypeError("Existing \"global_step\" does not have integer type: %s" %
                        global_step_tensor.dtype)
