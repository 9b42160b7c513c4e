"""TF 1.x's Saver over tensorweave/train/saver.h: checkpoints written and read by the process
that calls `save` and `restore` (the chief), so no ps task needs the directory, a shared file
system or allowed directories; the `checkpoint` state file; max_to_keep.

A save fetches every variable in one step of the caller's session and the C++ Saver writes
the files; a restore has the C++ Saver read and check them, and feeds the values to one step
of Assigns on the variables' tasks. With `write_on_variable_tasks=True` (a tensorweave
option) each task holding variables writes its own shard instead, as TF 1.x's sharded saves
do: its ops name the directory they write (inside each task's allowed directories,
docs/security.md), so they are built the first time a directory is used, or at
`build(directory)` before the graph is finalized."""

import collections
import numbers
import os
import threading

import numpy as np

from tensorweave import _native
from tensorweave import errors
from tensorweave.client import session as _session_lib
from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.ops import variables


def _saveables(var_list):
    """(checkpoint name, (handle node, dtype enum, shape), full shape, row offset, is an
    iterator) per variable, part of a partitioned variable, or iterator (what
    tf.data.experimental.make_saveable_from_iterator gives)."""
    if isinstance(var_list, dict):
        items = list(var_list.items())
    else:
        items = []
        for v in var_list:
            parts = getattr(v, "_get_variable_list", None)
            if parts is not None:  # a PartitionedVariable: its parts, one name
                items.extend((v.name, p) for p in parts())
            elif getattr(v, "_iterator_state_of", None) is not None:
                items.append((v.name, v))
            else:
                items.append((v.op.name, v))
    out, seen = [], set()
    for name, v in items:
        iterator_handle = getattr(v, "_iterator_state_of", None)
        if iterator_handle is not None:
            if name in seen:
                raise ValueError("At least two variables have the same name: %s" % name)
            seen.add(name)
            out.append((name,
                        (iterator_handle.op.name, dtypes.string.as_datatype_enum, []), [], 0,
                        True))
            continue
        if isinstance(v, (list, tuple)):
            for part in v:
                out.append(_entry(name, part))
            continue
        if not isinstance(v, variables.Variable):
            raise TypeError("Variable to save is not a Variable: %r" % (v,))
        entry = _entry(name, v)
        if entry[2] == [] and name in seen:
            raise ValueError("At least two variables have the same name: %s" % name)
        seen.add(name)
        out.append(entry)
    return out


def _entry(name, v):
    info = getattr(v, "_save_slice_info", None)
    spec = (v.op.name, v.dtype.as_datatype_enum, [int(d) for d in v.shape.as_list()])
    if info is None:
        return (name, spec, [], 0, False)
    return (info.full_name, spec, list(info.full_shape), int(info.var_offset[0]), False)


class SaverDef:
    """TF's SaverDef.CheckpointFormatVersion values, for Saver(write_version=...)."""
    LEGACY, V1, V2 = 0, 1, 2


class Saver:
    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
                 saver_def=None, builder=None, defer_build=False, allow_empty=False,
                 write_version=None, pad_step_number=False, save_relative_paths=False,
                 filename=None, write_on_variable_tasks=False):
        self._graph = ops.get_default_graph()
        if var_list is None:
            var_list = (variables.global_variables() +
                        self._graph.get_collection(ops.GraphKeys.SAVEABLE_OBJECTS))
        self._saveables = _saveables(var_list)
        if not self._saveables and not allow_empty:
            raise ValueError("No variables to save")
        self._max_to_keep = int(max_to_keep or 0)
        self._on_tasks = bool(write_on_variable_tasks)
        # V2 (the default, as in TF): TensorFlow's V2 checkpoint. V1 or LEGACY: tensorweave's
        # own index over the same data files (TF's V1 files are not written; docs/python.md).
        self._tensorflow_format = write_version in (None, SaverDef.V2)
        self._built = {}  # on the tasks: canonical directory -> (native, prefix, save, restore)
        self._directories = {}  # canonical directory -> _native.CheckpointDirectory
        self._save_lock = threading.Lock()
        self._last_directory = None
        self._local = None
        if self._saveables and not self._on_tasks and not defer_build:
            self.build()

    def _saves_iterators(self):
        """Whether the checkpoints hold input positions (make_saveable_from_iterator)."""
        return any(entry[4] for entry in self._saveables)

    def build(self, directory=None):
        """Builds the ops now (before the graph is finalized); with write_on_variable_tasks,
        those for `directory`."""
        if self._on_tasks:
            self._for_directory(directory)
            return
        if self._local is not None or not self._saveables:
            return
        graph = self._graph
        if graph.finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        with graph._native_building("saver"):
            native = _native.Saver(graph._native, self._saveables, "", self._max_to_keep, False,
                                   self._tensorflow_format)
        self._local = (native,
                       [graph.get_tensor_by_name(n) for n in native.value_names()],
                       [graph.get_tensor_by_name(n) for n in native.restore_input_names()],
                       graph.get_operation_by_name(native.restore_op_name()))

    def _directory(self, directory):
        key = os.path.realpath(directory or ".")
        found = self._directories.get(key)
        if found is None:
            found = _native.CheckpointDirectory(key, self._max_to_keep)
            self._directories[key] = found
        return found

    def _for_directory(self, directory):
        key = os.path.realpath(directory or ".")
        found = self._built.get(key)
        if found is not None:
            return found
        if not self._saveables:
            return None
        graph = self._graph
        if graph.finalized:
            raise RuntimeError(
                "Saver: the graph is finalized, and this Saver has no ops for %s yet: call "
                "saver.build(%r) before finalizing (with write_on_variable_tasks its ops name "
                "the directory they write)" % (key, directory))
        with graph._native_building("saver"):
            native = _native.Saver(graph._native, self._saveables, key, self._max_to_keep, True,
                                   self._tensorflow_format)
        prefix_name, save_name, restore_name = native.nodes()
        found = (native, graph.get_tensor_by_name(prefix_name),
                 graph.get_operation_by_name(save_name),
                 graph.get_operation_by_name(restore_name))
        self._built[key] = found
        return found

    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_suffix="meta", write_meta_graph=True, write_state=True,
             strip_default_attrs=False, save_debug_info=False):
        """Saves every variable as `save_path`-<global_step> (or `save_path` without a step)
        and returns that prefix; None when there is nothing to save."""
        directory, basename = os.path.split(os.path.abspath(save_path))
        # As TF: a missing parent directory is an error (the native Saver would create it).
        if self._saveables and not os.path.isdir(directory):
            raise ValueError("Parent directory of {} doesn't exist, can't save.".format(
                save_path))
        if not self._saveables:
            return None
        step = None
        if global_step is not None:
            # TF takes any integral number (numpy's too) as the step itself.
            step = int(global_step) if isinstance(global_step, (numbers.Integral, np.integer)) \
                else int(sess.run(global_step))
        # One save at a time (a Supervisor's checkpoint thread and the program may both
        # save): the directory's bookkeeping is not meant to run concurrently.
        with self._save_lock:
            bookkeeping = self._directory(directory)
            prefix = bookkeeping.begin_save(step, basename)
            if self._on_tasks:
                _, prefix_tensor, save_op, _ = self._for_directory(directory)
                sess.run(save_op, {prefix_tensor: prefix})
            else:
                self.build()
                native, value_tensors, _, _ = self._local
                values = sess.run(value_tensors)
                native.write_values(prefix, [_session_lib._feed_array(v, t)
                                             for v, t in zip(values, value_tensors)])
            if write_state:
                bookkeeping.finish_save(prefix)
            self._last_directory = bookkeeping.directory
        return prefix

    def restore(self, sess, save_path):
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        path = os.path.abspath(save_path)
        # As TF, checked first: building the ops for a directory would create it.
        if self._saveables and not checkpoint_exists(path):
            raise ValueError("The passed save_path is not a valid checkpoint: %s" % save_path)
        if not self._saveables:
            return
        bookkeeping = self._directory(os.path.dirname(path))
        try:
            prefix = bookkeeping.begin_restore(
                os.path.join(bookkeeping.directory, os.path.basename(path)))
        except errors.NotFoundError:
            raise ValueError("The passed save_path is not a valid checkpoint: %s" %
                             save_path) from None
        if self._on_tasks:
            _, prefix_tensor, _, restore_op = self._for_directory(os.path.dirname(path))
            sess.run(restore_op, {prefix_tensor: prefix})
            return
        self.build()
        native, _, inputs, restore_op = self._local
        sess.run(restore_op, dict(zip(inputs, native.read_values(prefix))))

    @property
    def last_checkpoints(self):
        if self._last_directory is None:
            return []
        state = get_checkpoint_state(self._last_directory)
        return list(state.all_model_checkpoint_paths) if state else []


def _get_saver_or_default():
    """The Saver of the SAVERS collection, or a new default one (all variables, empty
    allowed) added to it, as TF's saver._get_saver_or_default. Shared by the Scaffold and
    CheckpointSaverHook, so both use one Saver."""
    savers = ops.get_collection(ops.GraphKeys.SAVERS)
    if savers:
        if len(savers) > 1:
            raise RuntimeError("More than one item in collection {}. Please indicate which one "
                               "to use by passing it to the constructor.".format(
                                   ops.GraphKeys.SAVERS))
        return savers[0]
    saver = Saver(sharded=True, allow_empty=True)
    ops.add_to_collection(ops.GraphKeys.SAVERS, saver)
    return saver


CheckpointState = collections.namedtuple(
    "CheckpointState", ["model_checkpoint_path", "all_model_checkpoint_paths"])


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The directory's `checkpoint` file, paths made absolute; None when there is none."""
    state = _native.checkpoint_state(checkpoint_dir)
    if state is None:
        return None
    directory = os.path.realpath(checkpoint_dir)
    absolute = lambda p: p if os.path.isabs(p) else os.path.join(directory, p)  # noqa: E731
    return CheckpointState(absolute(state[0]), [absolute(p) for p in state[1]])


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The newest complete checkpoint's prefix, or None."""
    return _native.latest_checkpoint(checkpoint_dir)


def checkpoint_exists(checkpoint_prefix):
    return os.path.exists(checkpoint_prefix + ".index")
