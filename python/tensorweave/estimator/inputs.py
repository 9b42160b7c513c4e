"""tf.estimator.inputs.numpy_input_fn: an input_fn over numpy arrays, as TF 1.x's (batches
that run across epochs, the last one smaller, shuffled through a buffer of
queue_capacity), built on tf.data rather than TF's feeding queues."""

import numpy as np

from tensorweave.data import dataset_ops


def _columns(value, what):
    if isinstance(value, dict):
        return {k: np.asarray(v) for k, v in value.items()}
    return np.asarray(value)


def _length(value):
    arrays = list(value.values()) if isinstance(value, dict) else [value]
    return {len(a) for a in arrays}


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None,
                   queue_capacity=1000, num_threads=1):
    """An input_fn giving (features, labels) batches of `x` (a dict of arrays, or one
    array) and `y`; `num_epochs` None repeats forever."""
    if not isinstance(shuffle, bool):
        raise ValueError("shuffle must be provided explicitly as a bool, got %s instead." %
                         shuffle)
    features = _columns(x, "x")
    labels = None if y is None else _columns(y, "y")
    if isinstance(features, dict) and isinstance(labels, dict) and (
            set(features) & set(labels)):
        raise ValueError("%s duplicate keys are found in both x and y: %s" % (
            len(set(features) & set(labels)), sorted(set(features) & set(labels))))
    lengths = _length(features) | (set() if labels is None else _length(labels))
    if len(lengths) != 1:
        raise ValueError("Length of tensors in x and y is mismatched. All elements in x "
                         "and y must have the same length. Lengths: %s" % sorted(lengths))

    def input_fn():
        dataset = dataset_ops.Dataset.from_tensor_slices(
            features if labels is None else (features, labels))
        if shuffle:
            dataset = dataset.shuffle(queue_capacity)
        dataset = dataset.repeat(num_epochs).batch(batch_size)
        return dataset.make_one_shot_iterator().get_next()

    return input_fn
