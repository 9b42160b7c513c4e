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


def ignore_errors():
    raise NotImplementedError("tf.data.experimental.ignore_errors is not in tensorweave yet: "
                              "issue #31 brings it (input pipelines)")
