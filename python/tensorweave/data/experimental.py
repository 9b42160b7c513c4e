"""tf.data.experimental's common transformations, as compositions of the datasets'."""

from tensorweave.data import dataset_ops

AUTOTUNE = dataset_ops.AUTOTUNE


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    return lambda dataset: dataset.shuffle(buffer_size, seed=seed).repeat(count)


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    parallel = num_parallel_calls or num_parallel_batches
    return lambda dataset: dataset.map(map_func, num_parallel_calls=parallel).batch(
        batch_size, drop_remainder=drop_remainder)


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None):
    """As interleave (in order; `sloppy` orders are allowed to be deterministic)."""
    return lambda dataset: dataset.interleave(map_func, cycle_length, block_length)


class _IteratorSaveable:
    """An iterator's place in its input, as a Saver checkpoints it (the C++ Saver saves it
    with SerializeIterator and restores it with DeserializeIterator; a restore rebuilds the
    pipeline and replays up to the saved position, docs/architecture.md)."""

    def __init__(self, iterator_resource, name):
        self._iterator_state_of = iterator_resource
        self.name = name
        self.op = iterator_resource


def make_saveable_from_iterator(iterator, external_state_policy=None):
    """What TF's gives: an object to put in var_list or the SAVEABLE_OBJECTS collection,
    so that checkpoints keep the iterator's position and a restore resumes from it."""
    resource = iterator._resource
    return _IteratorSaveable(resource, resource.op.name + "_STATE")


def ignore_errors():
    raise NotImplementedError("tf.data.experimental.ignore_errors is not in tensorweave yet: "
                              "issue #31 brings it (input pipelines)")
