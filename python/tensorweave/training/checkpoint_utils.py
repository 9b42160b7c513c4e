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
