"""TF 1.x's queue-based input (tf.train.string_input_producer, input_producer,
range_input_producer, slice_input_producer, limit_epochs, batch, shuffle_batch, batch_join,
shuffle_batch_join), built as TensorFlow builds them: queues fed by QueueRunners, which
MonitoredTrainingSession, Supervisor and start_queue_runners start. Epochs are counted by a
local variable (CountUpTo), so the end of the input is OutOfRangeError, and nothing here
runs in Python but the graph's construction."""

from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework import sparse_tensor
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops import array_transforms
from tensorweave.ops import check_ops
from tensorweave.ops import data_flow_ops
from tensorweave.ops import math_ops
from tensorweave.ops import random_ops
from tensorweave.ops import variables
from tensorweave.summary import summary
from tensorweave.training import queue_runner


def limit_epochs(tensor, num_epochs=None, name=None):
    """`tensor`, which raises OutOfRangeError after it has been evaluated num_epochs times
    (a local variable counts: run local_variables_initializer first)."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError("num_epochs must be > 0 not %d." % num_epochs)
    with ops.name_scope(name, "limit_epochs") as scope:
        epochs = variables.Variable(constant(0, dtype=dtypes.int64), name="epochs",
                                    trainable=False,
                                    collections=[ops.GraphKeys.LOCAL_VARIABLES])
        counter = epochs.count_up_to(num_epochs)
        with ops.control_dependencies([counter]):
            return array_ops.identity(tensor, name=scope[:-1] if scope else None)


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None,
                   capacity=32, shared_name=None, summary_name=None, name=None,
                   cancel_op=None):
    """A FIFOQueue fed with the rows of input_tensor (shuffled each epoch), num_epochs times
    or forever, by a QueueRunner."""
    with ops.name_scope(name, "input_producer"):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        shape = input_tensor.shape
        element = shape[1:] if shape.ndims is not None else tensor_shape.unknown_shape()
        if element_shape is not None:
            element = element.merge_with(tensor_shape.as_shape(element_shape))
        if not element.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or "
                             "`element_shape` must be specified")
        if shuffle:
            input_tensor = random_ops.random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = data_flow_ops.FIFOQueue(capacity=capacity, dtypes=[input_tensor.dtype],
                                        shapes=[element], shared_name=shared_name, name=name)
        enqueue = queue.enqueue_many([input_tensor])
        queue_runner.add_queue_runner(queue_runner.QueueRunner(queue, [enqueue],
                                                               cancel_op=cancel_op))
        if summary_name is not None:
            summary.scalar(summary_name,
                           math_ops.to_float(queue.size()) * (1.0 / capacity))
        return queue


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32,
                          shared_name=None, name=None, cancel_op=None):
    """A queue of the strings (file names) for a reader, num_epochs times or forever."""
    not_null_err = "string_input_producer requires a non-null input tensor"
    if not isinstance(string_tensor, ops.Tensor) and not string_tensor:
        raise ValueError(not_null_err)
    with ops.name_scope(name, "input_producer") as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        with ops.control_dependencies([check_ops.Assert(
                math_ops.greater(array_ops.size(string_tensor), 0), [not_null_err])]):
            string_tensor = array_ops.identity(string_tensor)
        return input_producer(input_tensor=string_tensor, element_shape=[],
                              num_epochs=num_epochs, shuffle=shuffle, seed=seed,
                              capacity=capacity, shared_name=shared_name,
                              name=scope[:-1].split("/")[-1],
                              summary_name="fraction_of_%d_full" % capacity,
                              cancel_op=cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """A queue of the integers 0 .. limit-1, num_epochs times or forever."""
    with ops.name_scope(name, "input_producer") as scope:
        range_tensor = array_transforms.range(limit)
        return input_producer(range_tensor, [], num_epochs, shuffle, seed, capacity,
                              shared_name, "fraction_of_%d_full" % capacity,
                              scope[:-1].split("/")[-1])


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """One row of each tensor in tensor_list at a time (the same row of each), through a
    queue of row numbers."""
    with ops.name_scope(name, "input_producer"):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        range_size = array_ops.shape(tensor_list[0])[0]
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle,
                                     seed=seed, capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [array_ops.gather(t, index) for t in tensor_list]


# ---- batching ----

def _flatten(tensors):
    """The tensors of a dict (by sorted key), a list or tuple, or one tensor."""
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors)]
    if isinstance(tensors, (list, tuple)):
        return list(tensors)
    return [tensors]


def _validate(tensors):
    tensor_list = _flatten(tensors)
    if not tensor_list:
        raise ValueError("Expected at least one tensor in batch().")
    for t in tensor_list:
        if isinstance(t, sparse_tensor.SparseTensor):
            raise NotImplementedError(
                "batching a SparseTensor is not in tensorweave: densify it first "
                "(tf.sparse_tensor_to_dense) or batch the serialized records and parse the "
                "batch with tf.parse_example")
    return [convert_to_tensor(t) for t in tensor_list]


def _shapes(tensor_lists, shapes, enqueue_many, unknown_dims_allowed=False):
    if shapes is not None:
        return [tensor_shape.as_shape(s) for s in shapes]
    shapes = []
    for i, t in enumerate(tensor_lists[0]):
        shape = t.shape
        if enqueue_many:
            shape = shape[1:] if shape.ndims is not None else shape
        for other in tensor_lists[1:]:
            more = other[i].shape
            shape = shape.merge_with(more[1:] if enqueue_many and more.ndims is not None
                                     else more)
        if shape.dims is None or (not unknown_dims_allowed and not shape.is_fully_defined()):
            raise ValueError("All shapes must be fully defined: %s" %
                             [t.shape for t in tensor_lists[0]])
        shapes.append(shape)
    return shapes


def _as_original_type(original, dequeued):
    if isinstance(original, dict):
        if not isinstance(dequeued, list):
            dequeued = [dequeued]
        return {k: dequeued[i] for i, k in enumerate(sorted(original))}
    return dequeued


def _enqueue_join(queue, tensor_lists, enqueue_many):
    enqueue = queue.enqueue_many if enqueue_many else queue.enqueue
    enqueue_ops = [enqueue(tensors) for tensors in tensor_lists]
    queue_runner.add_queue_runner(queue_runner.QueueRunner(queue, enqueue_ops))


def _dequeue(queue, batch_size, allow_smaller_final_batch, name):
    if allow_smaller_final_batch:
        return queue.dequeue_up_to(batch_size, name=name)
    return queue.dequeue_many(batch_size, name=name)


def _batch(tensor_lists, original, batch_size, capacity, enqueue_many, shapes, dynamic_pad,
           allow_smaller_final_batch, shared_name, name, default_name):
    with ops.name_scope(name, default_name) as scope:
        types = [t.dtype for t in tensor_lists[0]]
        shapes = _shapes(tensor_lists, shapes, enqueue_many, unknown_dims_allowed=dynamic_pad)
        if dynamic_pad:
            queue = data_flow_ops.PaddingFIFOQueue(capacity=capacity, dtypes=types,
                                                   shapes=shapes, shared_name=shared_name)
        else:
            queue = data_flow_ops.FIFOQueue(capacity=capacity, dtypes=types, shapes=shapes,
                                            shared_name=shared_name)
        _enqueue_join(queue, tensor_lists, enqueue_many)
        summary.scalar("fraction_of_%d_full" % capacity,
                       math_ops.to_float(queue.size()) * (1.0 / capacity))
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope[:-1])
        return _as_original_type(original, dequeued)


def _shuffle_batch(tensor_lists, original, batch_size, capacity, min_after_dequeue, seed,
                   enqueue_many, shapes, allow_smaller_final_batch, shared_name, name,
                   default_name):
    with ops.name_scope(name, default_name) as scope:
        types = [t.dtype for t in tensor_lists[0]]
        shapes = _shapes(tensor_lists, shapes, enqueue_many)
        queue = data_flow_ops.RandomShuffleQueue(
            capacity=capacity, min_after_dequeue=min_after_dequeue, seed=seed, dtypes=types,
            shapes=shapes, shared_name=shared_name)
        _enqueue_join(queue, tensor_lists, enqueue_many)
        full = (math_ops.to_float(math_ops.maximum(0, queue.size() - min_after_dequeue)) *
                (1.0 / max(1, capacity - min_after_dequeue)))
        summary.scalar("fraction_over_%d_of_%d_full" % (min_after_dequeue,
                                                        capacity - min_after_dequeue), full)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope[:-1])
        return _as_original_type(original, dequeued)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of `tensors` (a list, a dict or one tensor), filled by num_threads threads."""
    tensor_list = _validate(tensors)
    return _batch([tensor_list] * num_threads, tensors, batch_size, capacity, enqueue_many,
                  shapes, dynamic_pad, allow_smaller_final_batch, shared_name, name, "batch")


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None,
               name=None):
    """Batches of the tensors of every list in tensors_list, one thread per list."""
    lists = [_validate(t) for t in tensors_list]
    return _batch(lists, tensors_list[0], batch_size, capacity, enqueue_many, shapes,
                  dynamic_pad, allow_smaller_final_batch, shared_name, name, "batch_join")


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    """Shuffled batches of `tensors`: drawn from a RandomShuffleQueue that holds at least
    min_after_dequeue elements until the input ends."""
    tensor_list = _validate(tensors)
    return _shuffle_batch([tensor_list] * num_threads, tensors, batch_size, capacity,
                          min_after_dequeue, seed, enqueue_many, shapes,
                          allow_smaller_final_batch, shared_name, name, "shuffle_batch")


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    lists = [_validate(t) for t in tensors_list]
    return _shuffle_batch(lists, tensors_list[0], batch_size, capacity, min_after_dequeue,
                          seed, enqueue_many, shapes, allow_smaller_final_batch, shared_name,
                          name, "shuffle_batch_join")
