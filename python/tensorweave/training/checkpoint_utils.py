"""Reading checkpoints without a graph, as TF 1.x's checkpoint_utils: list_variables,
load_variable, load_checkpoint and NewCheckpointReader, over the C++ CheckpointReader
(src/checkpoint/checkpoint_reader.h), which checks every slice's checksum."""

import os

from tensorweave import _native
from tensorweave import errors


def _prefix(ckpt_dir_or_file):
    """A checkpoint prefix: the latest checkpoint of a directory, or the prefix given."""
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = _native.latest_checkpoint(path)
        if latest is None:
            raise ValueError("Couldn't find 'checkpoint' file or checkpoints in given "
                             "directory %s" % path)
        return latest
    return path


def _tensor_name(name):
    return name[:-2] if name.endswith(":0") else name


class CheckpointReader:
    """The names, shapes and values a checkpoint holds."""

    def __init__(self, prefix):
        self._prefix = prefix
        self._shapes = dict(_native.checkpoint_variables(prefix))

    def get_variable_to_shape_map(self):
        return {name: list(shape) for name, shape in self._shapes.items()}

    def has_tensor(self, name):
        return _tensor_name(name) in self._shapes

    def get_tensor(self, name):
        name = _tensor_name(name)
        if name not in self._shapes:
            raise errors.NotFoundError(None, None, "Key %s not found in checkpoint %s" %
                                       (name, self._prefix))
        return _native.checkpoint_tensor(self._prefix, name)

    def debug_string(self):
        return "".join("%s (DT) %s\n" % (n, s) for n, s in sorted(self._shapes.items()))


def NewCheckpointReader(filepattern):  # noqa: N802 (TF's name)
    return CheckpointReader(os.fspath(filepattern))


def load_checkpoint(ckpt_dir_or_file):
    return CheckpointReader(_prefix(ckpt_dir_or_file))


def list_variables(ckpt_dir_or_file):
    """(name, shape) of every tensor in the checkpoint, sorted by name."""
    reader = load_checkpoint(ckpt_dir_or_file)
    return sorted((name, shape) for name, shape in
                  reader.get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file, name):
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


# ---- init_from_checkpoint ----

def _variables_of(current, store):
    """The Variable, or the parts of a partitioned variable, that `current` names (a
    Variable, a list of them, a PartitionedVariable, or a name in get_variable's store);
    None when it names none."""
    from tensorweave.ops import partitioned_variables
    from tensorweave.ops import variables
    if isinstance(current, variables.Variable):
        return [current]
    if isinstance(current, partitioned_variables.PartitionedVariable):
        return list(current)
    if isinstance(current, (list, tuple)) and current and all(
            isinstance(v, variables.Variable) for v in current):
        return list(current)
    if isinstance(current, str) and current in store:
        return _variables_of(store[current], store)
    return None


def _slice_spec(var):
    """RestoreV2's shape_and_slices entry for a variable: "" when whole, TF's spec for a
    part ("10 4 0,4:0,4")."""
    info = getattr(var, "_save_slice_info", None)
    if info is None:
        return ""
    part = [int(d) for d in var.shape.as_list()]
    return "%s %s" % (" ".join(str(int(d)) for d in info.full_shape),
                      ":".join("%d,%d" % (int(o), n) for o, n in zip(info.var_offset, part)))


def _initialize_from(parts, prefix, tensor_name):
    """Each part's initializer becomes an assignment of its slice of `tensor_name`, read
    by a RestoreV2 op on the variable's device when the initializer runs (as TF)."""
    from tensorweave import raw_ops
    from tensorweave.framework import op_def_library
    from tensorweave.framework.constant_op import constant
    for var in parts:
        graph = var.graph
        with graph.colocate_with(var._handle_op), graph.name_scope(None):
            restore = op_def_library.apply_op(
                "RestoreV2", prefix=constant(prefix), tensor_names=constant([tensor_name]),
                shape_and_slices=constant([_slice_spec(var)]),
                dtypes=[var.dtype.base_dtype], name="checkpoint_initializer").outputs[0]
            var._initializer_op = raw_ops.Assign(resource=var._handle, value=restore,
                                                 validate_shape=True).op
        var._initial_value = restore


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """TF's: variables take their initial values from a checkpoint, by assignment_map:
    {"ckpt_scope/": "scope/"} (every variable of scope/ from the same names under
    ckpt_scope/; "/" is the root), {"ckpt_name": "var_name" | Variable | [parts]}. Their
    initializers then read the checkpoint when they run. ValueError naming the tensor when
    the checkpoint lacks it or its shape differs."""
    from tensorweave.framework import ops
    from tensorweave.framework import tensor_shape
    from tensorweave.ops import variable_scope
    prefix = _prefix(ckpt_dir_or_file)
    shapes = CheckpointReader(prefix).get_variable_to_shape_map()
    store = variable_scope._graph_store(ops.get_default_graph())["vars"]
    items = assignment_map.items() if hasattr(assignment_map, "items") else assignment_map
    for tensor_name, current in sorted(items, key=lambda item: item[0]):
        parts = _variables_of(current, store)
        if parts is not None:
            if tensor_name not in shapes:
                raise ValueError("Tensor %s is not found in %s checkpoint %s" %
                                 (tensor_name, ckpt_dir_or_file, shapes))
            full = tensor_shape.as_shape(shapes[tensor_name])
            info = getattr(parts[0], "_save_slice_info", None)
            shape = tensor_shape.as_shape(info.full_shape) if info is not None \
                else parts[0].get_shape()
            if not shape.is_compatible_with(full):
                raise ValueError("Shape of variable %s (%s) doesn't match with shape of tensor "
                                 "%s (%s) from checkpoint reader." %
                                 (",".join(v.name for v in parts), shape, tensor_name, full))
            _initialize_from(parts, prefix, tensor_name)
            continue
        scopes = current[:current.rindex("/")] if "/" in current else ""
        if not tensor_name.endswith("/"):
            raise ValueError("Assignment map with scope only name {} should map to scope only "
                             "{}. Should be 'scope/': 'other_scope/'.".format(scopes, tensor_name))
        for var_name in sorted(n for n in store if not scopes or n.startswith(scopes + "/")):
            full_tensor_name = var_name[len(scopes):]
            if current != "/":
                full_tensor_name = full_tensor_name[1:]
            if tensor_name != "/":
                full_tensor_name = tensor_name + full_tensor_name
            full_tensor_name = full_tensor_name.rstrip("/")
            if full_tensor_name not in shapes:
                raise ValueError("Tensor %s (%s in %s) is not found in %s checkpoint" %
                                 (full_tensor_name, var_name[len(scopes) + 1:], tensor_name,
                                  ckpt_dir_or_file))
            _initialize_from(_variables_of(store[var_name], store), prefix, full_tensor_name)
