"""tf.graph_util: a trained graph frozen for serving. `convert_variables_to_constants`
replaces each variable that the outputs read with a Const node holding its value in the
session, and keeps only what the outputs need (`extract_sub_graph`), as TF 1.x's does.

Variables here are resources (TF's ResourceVariable): a variable `v` is a `Variable` node
whose value is read by `ReadVariable` nodes (`v/read`). Freezing turns each of those reads
into a Const of the same name, so every node that used the value is unchanged, and the
`Variable` node, no longer needed, is left out with the initializers and updates."""

import numpy as np

from tensorweave import _native
from tensorweave.framework import dtypes
from tensorweave.protobuf import graph_pb2
from tensorweave.protobuf import tensor_pb2


def extract_sub_graph(graph_def, dest_nodes):
    """The nodes `dest_nodes` need (themselves and everything they depend on, through data
    and control inputs), in their original order: the runtime's own pruning of a step's
    graph (PruneForStep), with TF's errors."""
    if not isinstance(graph_def, graph_pb2.GraphDef):
        raise TypeError("graph_def must be a graph_pb2.GraphDef proto.")
    if isinstance(dest_nodes, str):
        raise TypeError("dest_nodes must be a list.")
    names = {node.name for node in graph_def.node}
    for name in dest_nodes:
        if name not in names:
            raise AssertionError("%s is not in graph" % name)
    out = graph_pb2.GraphDef()
    out.ParseFromString(_native.extract_sub_graph(graph_def.SerializeToString(),
                                                  list(dest_nodes)))
    return out


def _tensor_proto(value):
    value = np.asarray(value)
    proto = tensor_pb2.TensorProto()
    proto.dtype = dtypes.as_dtype(value.dtype).as_datatype_enum
    proto.shape.dim.extend(value.shape)
    if value.dtype.kind in ("S", "U", "O"):
        proto.string_val.extend(v if isinstance(v, bytes) else str(v).encode()
                                for v in value.reshape(-1))
    else:
        proto.tensor_content = np.ascontiguousarray(value).astype(
            value.dtype.newbyteorder("<"), copy=False).tobytes()
    return proto


def convert_variables_to_constants(sess, input_graph_def, output_node_names,
                                   variable_names_whitelist=None,
                                   variable_names_blacklist=None):
    """`input_graph_def` cut down to what `output_node_names` need, each variable they read
    (all, or those of the whitelist, none of the blacklist) replaced by its value in
    `sess`."""
    needed = extract_sub_graph(input_graph_def, output_node_names)
    by_name = {node.name: node for node in needed.node}
    reads = {}  # ReadVariable node -> the Variable node it reads
    for node in needed.node:
        if node.op != "ReadVariable" or not node.input:
            continue
        source = node.input[0].split(":")[0]
        if by_name.get(source) is None or by_name[source].op != "Variable":
            continue
        if variable_names_whitelist is not None and source not in variable_names_whitelist:
            continue
        if variable_names_blacklist is not None and source in variable_names_blacklist:
            continue
        reads[node.name] = source
    values = dict(zip(reads, sess.run([name + ":0" for name in reads]))) if reads else {}
    frozen = graph_pb2.GraphDef()
    for node in needed.node:
        if node.name in reads:
            const = frozen.node.add()
            const.name = node.name
            const.op = "Const"
            const.device = node.device
            value = _tensor_proto(values[node.name])
            const.attr["dtype"].type = value.dtype
            const.attr["value"].tensor.CopyFrom(value)
            # Control inputs of the read (an update it was ordered after) are dropped with
            # the variable: a constant waits for nothing.
        else:
            frozen.node.add().CopyFrom(node)
    # Variables only the frozen reads used are no longer needed.
    return extract_sub_graph(frozen, output_node_names)

