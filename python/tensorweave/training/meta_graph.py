"""tf.train.export_meta_graph / import_meta_graph and tf.train.write_graph.

A MetaGraphDef (TF's messages and field numbers, tensorweave's GraphDef inside) holds the
graph and its collections, encoded as TF encodes them: variables as VariableDef protos (by
the names of their nodes), operations and tensors by name, strings and numbers as lists.
Other values (queue runners, savers, Python objects) are left out, as TF leaves out what it
cannot serialize. Importing adds the graph with tf.import_graph_def, rebuilds the
collections (a variable in several collections is one Variable) and returns a Saver over
the imported variables, so a program can restore a checkpoint into a graph it never built."""

import os

from google.protobuf import text_format

from tensorweave.framework import importer
from tensorweave.framework import ops
from tensorweave.ops import variables
from tensorweave.platform import tf_logging as logging
from tensorweave.protobuf import graph_pb2
from tensorweave.protobuf import meta_graph_pb2

MetaGraphDef = meta_graph_pb2.MetaGraphDef
CollectionDef = meta_graph_pb2.CollectionDef
VariableDef = meta_graph_pb2.VariableDef

# Collections whose values are variables (TF registers VariableDef for these keys).
_VARIABLE_COLLECTIONS = {
    ops.GraphKeys.GLOBAL_VARIABLES, ops.GraphKeys.TRAINABLE_VARIABLES,
    ops.GraphKeys.LOCAL_VARIABLES, ops.GraphKeys.MODEL_VARIABLES,
    ops.GraphKeys.METRIC_VARIABLES, ops.GraphKeys.GLOBAL_STEP, "moving_average_variables"}


def _variable_def(v):
    return VariableDef(variable_name=v.name, initializer_name=v.initializer.name,
                       snapshot_name=v.value().name, is_resource=True,
                       trainable=bool(v.trainable)).SerializeToString()


def _add_collection(meta, key, values):
    """Encodes one collection into `meta`, or logs why it cannot (as TF warns)."""
    collection = CollectionDef()
    if all(isinstance(v, variables.Variable) for v in values):
        collection.bytes_list.value.extend(_variable_def(v) for v in values)
    elif all(isinstance(v, (ops.Operation, ops.Tensor)) for v in values):
        collection.node_list.value.extend(v.name for v in values)
    elif all(isinstance(v, (str, bytes)) for v in values):
        collection.bytes_list.value.extend(v.encode() if isinstance(v, str) else v
                                           for v in values)
    elif all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        collection.int64_list.value.extend(values)
    elif all(isinstance(v, float) for v in values):
        collection.float_list.value.extend(values)
    else:
        logging.warning("Issue encountered when serializing %s: its values cannot be "
                        "written to a MetaGraphDef and are left out.", key)
        return
    meta.collection_def[key].CopyFrom(collection)


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None,
                      collection_list=None, as_text=False, graph=None, export_scope=None,
                      clear_devices=False, clear_extraneous_savers=False,
                      strip_default_attrs=False, save_debug_info=False, **kwargs):
    """The graph (the default one) and its collections (all, or `collection_list`) as a
    MetaGraphDef, also written to `filename` when given (text with `as_text`)."""
    if export_scope is not None:
        raise NotImplementedError("export_meta_graph: export_scope is not supported")
    from tensorweave import compat
    graph = graph if graph is not None else ops.get_default_graph()
    meta = MetaGraphDef()
    if meta_info_def is not None:
        meta.meta_info_def.CopyFrom(meta_info_def)
    meta.meta_info_def.tensorflow_version = compat.v1.__version__
    meta.meta_info_def.tensorflow_git_version = compat.v1.__git_version__
    meta.graph_def.CopyFrom(graph_def if graph_def is not None else graph.as_graph_def())
    if clear_devices:
        for node in meta.graph_def.node:
            node.device = ""
    if saver_def is not None:
        meta.saver_def.CopyFrom(saver_def)
    keys = collection_list if collection_list is not None else graph.get_all_collection_keys()
    for key in keys:
        values = graph.get_collection(key)
        if values:
            _add_collection(meta, key, values)
    if filename:
        write_graph(meta, os.path.dirname(filename) or ".", os.path.basename(filename),
                    as_text=as_text)
    return meta


def read_meta_graph_file(filename):
    """A MetaGraphDef from a file written by export_meta_graph, binary or text."""
    if not os.path.exists(filename):
        raise IOError("File %s does not exist." % filename)
    with open(filename, "rb") as f:
        data = f.read()
    meta = MetaGraphDef()
    try:
        meta.ParseFromString(data)
    except Exception:  # not binary: TF tries the text form next
        try:
            text_format.Merge(data.decode("utf-8"), meta)
        except Exception as e:
            raise IOError("Cannot parse file %s: %s." % (filename, e)) from None
    return meta


def _restore_collections(meta, graph, prefix):
    imported_variables = {}

    def element(name):
        return graph.as_graph_element(prefix + name)

    def variable(serialized):
        definition = VariableDef()
        definition.ParseFromString(serialized)
        handle = element(definition.variable_name)
        handle_op = handle.op if isinstance(handle, ops.Tensor) else handle
        if handle_op.name not in imported_variables:
            imported_variables[handle_op.name] = variables.Variable._from_imported(
                handle_op, element(definition.initializer_name),
                element(definition.snapshot_name), definition.trainable)
        return imported_variables[handle_op.name]

    for key in sorted(meta.collection_def):
        collection = meta.collection_def[key]
        kind = collection.WhichOneof("kind")
        if kind == "node_list":
            values = [element(name) for name in collection.node_list.value]
        elif kind == "bytes_list" and key in _VARIABLE_COLLECTIONS:
            values = [variable(v) for v in collection.bytes_list.value]
        elif kind == "bytes_list":
            values = list(collection.bytes_list.value)
        elif kind in ("int64_list", "float_list"):
            values = list(getattr(collection, kind).value)
        else:
            continue
        for value in values:
            graph.add_to_collection(key, value)
    return imported_variables


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **kwargs):
    """Adds the graph of a MetaGraphDef (or of the file holding one) to the default graph,
    under `import_scope`, with its collections; returns a Saver over its variables, or
    None when it has none."""
    from tensorweave.training import saver as saver_lib
    meta = meta_graph_or_file
    if not isinstance(meta, MetaGraphDef):
        meta = read_meta_graph_file(meta_graph_or_file)
    graph_def = graph_pb2.GraphDef()
    graph_def.CopyFrom(meta.graph_def)
    if clear_devices:
        for node in graph_def.node:
            node.device = ""
    graph = ops.get_default_graph()
    importer.import_graph_def(graph_def, name=import_scope or "")
    prefix = import_scope + "/" if import_scope else ""
    imported = _restore_collections(meta, graph, prefix)
    if not imported:
        logging.info("Saver not created because there are no variables in the graph to "
                     "restore")
        return None
    return saver_lib.Saver(var_list=list(imported.values()))


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Writes a graph's GraphDef (or any message given) to logdir/name, as text by default;
    returns the path."""
    message = graph_or_graph_def
    if isinstance(message, ops.Graph):
        message = message.as_graph_def()
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    if as_text:
        data = text_format.MessageToString(message).encode("utf-8")
    else:
        data = message.SerializeToString()
    with open(path, "wb") as f:
        f.write(data)
    return path
