"""tf.saved_model.loader: load a SavedModel (TensorFlow's format, written by TensorFlow or
tensorweave) into a session: its graph, converted to tensorweave's ops in C++
(src/saved_model/graph_import.h), its variables restored through its own saver subgraph,
then its main op run."""

import os

from tensorweave import _native
from tensorweave import errors
from tensorweave.framework import importer
from tensorweave.framework import tensor_shape
from tensorweave.saved_model import signature_def_utils
from tensorweave.saved_model import utils


class MetaGraphDef:
    """The parts of TF's MetaGraphDef that programs read after a load: `signature_def`
    (key -> SignatureDef), `meta_info_def.tags`, `saver_def`, and `collection_def` names."""

    class _Info:
        def __init__(self, tags):
            self.tags = list(tags)

    class _SaverDef:
        def __init__(self, filename_tensor_name, restore_op_name):
            self.filename_tensor_name = filename_tensor_name
            self.restore_op_name = restore_op_name

    def __init__(self, loaded):
        self.meta_info_def = MetaGraphDef._Info(loaded["tags"])
        self.signature_def = {}
        for key, (method, inputs, outputs) in loaded["signatures"].items():
            self.signature_def[key] = signature_def_utils.SignatureDef(
                {k: _tensor_info(*v) for k, v in inputs.items()},
                {k: _tensor_info(*v) for k, v in outputs.items()}, method)
        saver = loaded["saver"]
        self.saver_def = MetaGraphDef._SaverDef(*saver) if saver else None


def _tensor_info(name, dtype, dims):
    shape = tensor_shape.unknown_shape() if dims is None else tensor_shape.TensorShape(
        [None if d < 0 else d for d in dims])
    return utils.TensorInfo(name, dtype, shape)


def maybe_saved_model_directory(export_dir):
    export_dir = os.fsdecode(export_dir)
    return any(os.path.isfile(os.path.join(export_dir, name))
               for name in ("saved_model.pb", "saved_model.pbtxt"))


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Imports the MetaGraphDef tagged `tags` into sess.graph (under `import_scope`),
    restores its variables from export_dir/variables/variables and runs its main op (or
    legacy init op); returns the MetaGraphDef. RuntimeError (TF's message) when no
    MetaGraphDef has those tags; IOError when there is no SavedModel."""
    export_dir = os.fsdecode(export_dir)  # TF's exports name themselves in bytes
    try:
        loaded = _native.read_saved_model(export_dir, list(tags))
    except errors.NotFoundError as e:
        if "could not be found in SavedModel" in e.message:
            raise RuntimeError(e.message)
        raise IOError(e.message)
    full = (lambda n: import_scope + "/" + n) if import_scope else (lambda n: n)
    with sess.graph.as_default():
        importer.import_graph_def(loaded["graph_def"], name=import_scope or "")
    # The restore and main op runs, with their feeds (variables' prefix, assets' places),
    # as C++ plans them for its own loader too.
    for feeds, target in loaded["load_steps"]:
        sess.run(full(target), {full(name): value for name, value in feeds})
    return MetaGraphDef(loaded)
