"""tf.saved_model.builder.SavedModelBuilder: a SavedModel directory as TensorFlow writes one
(saved_model.pb, variables/variables.{index,data-*}, assets/), loadable by TensorFlow and
TF Serving. The MetaGraphDefs are made in C++ (src/saved_model/meta_graph_export.h): only the
ops the signatures need, in TensorFlow's names; one TensorFlow lacks is refused by name."""

import filecmp
import os
import shutil

from tensorweave import _native
from tensorweave.framework import ops
from tensorweave.ops import variables
from tensorweave.training import saver as saver_lib


def _tensor_tuples(infos):
    out = []
    for key, info in sorted(infos.items()):
        shape = info.tensor_shape
        dims = None if shape is None or shape.ndims is None else \
            [-1 if d is None else int(d) for d in shape.as_list()]
        out.append((key, info.name, int(info.dtype), dims))
    return out


def _op_name(op):
    if op is None:
        return ""
    return op.name if hasattr(op, "name") and not hasattr(op, "op") else op.op.name


class SavedModelBuilder:
    def __init__(self, export_dir):
        self._export_dir = os.fspath(export_dir)
        if os.path.exists(self._export_dir) and (not os.path.isdir(self._export_dir) or
                                                 os.listdir(self._export_dir)):
            raise AssertionError(
                "Export directory already exists, and isn't empty. Please choose a different "
                "export directory, or delete all the contents of the specified directory: %s"
                % self._export_dir)
        os.makedirs(self._export_dir, exist_ok=True)
        self._has_saved_variables = False
        self._saveables = []
        self._meta_graphs = []

    def _assets(self, assets_collection):
        """Copies each asset (a string Const holding a file's path) into export_dir/assets
        under its base name, as TF's builder does; returns [(tensor name, file name)]."""
        out = []
        for tensor in assets_collection or []:
            if tensor.op.type != "Const":
                raise ValueError("Asset %s must be a string constant holding a file's path "
                                 "(its op is %s)" % (tensor.name, tensor.op.type))
            source = tensor.op.get_attr("value")
            source = os.fsdecode(source.item() if hasattr(source, "item") else source)
            filename = os.path.basename(source)
            target = os.path.join(self._export_dir, "assets", filename)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if os.path.exists(target) and not filecmp.cmp(source, target, shallow=False):
                raise ValueError("Assets %s and %s have the same name and different contents"
                                 % (source, target))
            shutil.copyfile(source, target)
            out.append((tensor.name, filename))
        return out

    def _add(self, tags, signature_def_map, assets_collection, legacy_init_op, clear_devices,
             main_op):
        graph = ops.get_default_graph()
        signatures = [(key, sig.method_name, _tensor_tuples(sig.inputs),
                       _tensor_tuples(sig.outputs))
                      for key, sig in sorted((signature_def_map or {}).items())]
        variable_specs = [(name, node, dtype, list(shape), list(full_shape), offset)
                          for name, (node, dtype, shape), full_shape, offset, iterator
                          in self._saveables if not iterator]
        init = main_op if main_op is not None else legacy_init_op
        self._meta_graphs.append(_native.export_meta_graph(
            graph._native.graph_def(), list(tags), signatures, variable_specs,
            self._assets(assets_collection), _op_name(init), bool(clear_devices)))

    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None,
                                     assets_collection=None, legacy_init_op=None,
                                     clear_devices=False, main_op=None,
                                     strip_default_attrs=False, saver=None):
        if self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has already "
                                 "been saved. Please invoke `add_meta_graph()` instead.")
        saver = saver or saver_lib.Saver(variables.global_variables(), allow_empty=True)
        self._saveables = list(saver._saveables)
        directory = os.path.join(self._export_dir, "variables")
        os.makedirs(directory, exist_ok=True)
        saver.save(sess, os.path.join(directory, "variables"), write_meta_graph=False,
                   write_state=False)
        self._add(tags, signature_def_map, assets_collection, legacy_init_op, clear_devices,
                  main_op)
        self._has_saved_variables = True

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None,
                       legacy_init_op=None, clear_devices=False, main_op=None,
                       strip_default_attrs=False, saver=None):
        if not self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has not been "
                                 "saved yet. Please invoke `add_meta_graph_and_variables()` "
                                 "first.")
        self._add(tags, signature_def_map, assets_collection, legacy_init_op, clear_devices,
                  main_op)

    def save(self, as_text=False):
        _native.write_saved_model(self._export_dir, self._meta_graphs, bool(as_text))
        name = "saved_model.pbtxt" if as_text else "saved_model.pb"
        return os.path.join(self._export_dir, name).encode()
