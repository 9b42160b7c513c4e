"""tf.import_graph_def: the nodes of a GraphDef added to the default graph by the C++
importer (tensorweave/graph_import.h), each checked as a node built here is, then made
Operations here as nodes C++ code adds are."""

from tensorweave.framework import ops


def _serialized(graph_def):
    if isinstance(graph_def, bytes):
        return graph_def
    if hasattr(graph_def, "SerializeToString"):
        return graph_def.SerializeToString()
    raise TypeError("graph_def must be a GraphDef proto.")


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None,
                     op_dict=None, producer_op_list=None):
    """Imports `graph_def` under the name scope `name` ("import" by default, "" for the
    names as they are), its inputs named in `input_map` ({"name:0": Tensor}) taken from
    this graph instead; returns the elements named in `return_elements` (tensors "x:0" or
    operations "x"), or None."""
    graph = ops.get_default_graph()
    data = _serialized(graph_def)
    native_map = {}
    for key, tensor in (input_map or {}).items():
        if not isinstance(key, str):
            raise TypeError("input_map must be a dictionary mapping strings to Tensor objects.")
        if not isinstance(tensor, ops.Tensor):
            raise TypeError("input_map must be a dictionary mapping strings to Tensor objects.")
        if tensor.graph is not graph:
            raise ValueError("Tensor %s in input_map is not in the default graph." % tensor.name)
        native_map[key] = (tensor.op.name, tensor.value_index)
    with ops.name_scope(name, "import", list((input_map or {}).values())) as scope:
        prefix = scope[:-1] if scope else ""
    with graph._native_building(prefix or "import"):
        graph._native.import_graph_def(data, prefix, native_map)
    if return_elements is None:
        return None
    full = (lambda n: prefix + "/" + n) if prefix else (lambda n: n)
    return [graph.as_graph_element(full(n)) for n in return_elements]
