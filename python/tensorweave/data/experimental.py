"""tf.data.experimental's common transformations, as compositions of the datasets'."""

import functools

from tensorweave.data import dataset_ops
from tensorweave.data import nest

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
    """Drops the elements whose making failed (a record that does not parse, a file that
    does not open) instead of raising their errors."""
    return lambda dataset: dataset._derived("IgnoreErrors")


def unbatch():
    return lambda dataset: dataset.unbatch()


def sample_from_datasets(datasets, weights=None, seed=None):
    """Each element from one of `datasets`, drawn with probability proportional to its
    weight (equal by default) among those not yet at their end; ends when all are."""
    datasets = list(datasets)
    if not datasets:
        raise ValueError("sample_from_datasets needs at least one dataset")
    if weights is None:
        weights = [1.0] * len(datasets)
    weights = [float(w) for w in weights]
    if len(weights) != len(datasets):
        raise ValueError("sample_from_datasets: %d weights for %d datasets" %
                         (len(weights), len(datasets)))
    first = datasets[0]
    for d in datasets[1:]:
        if (nest.flatten(d.output_types) != nest.flatten(first.output_types) or
                nest.flatten(d.output_classes) != nest.flatten(first.output_classes)):
            raise TypeError("All datasets must have the same type structure: %s and %s" %
                            (first.output_types, d.output_types))
    shapes = [nest.flatten(d.output_shapes) for d in datasets]
    merged = nest.pack_sequence_as(first.output_types, [
        functools.reduce(dataset_ops._most_specific, column) for column in zip(*shapes)])
    from tensorweave.ops import random_ops
    seed1, seed2 = random_ops._seeds(seed)
    return dataset_ops.Dataset("SampleFromDatasets", datasets,
                               attrs={"weights": weights, "seed": (seed1 << 32) ^ seed2},
                               types=first.output_types, shapes=merged,
                               classes=first.output_classes)
