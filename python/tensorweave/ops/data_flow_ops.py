"""TF 1.x's queues (FIFOQueue, RandomShuffleQueue, PaddingFIFOQueue, PriorityQueue) with its
names and semantics; a queue lives on the device it was created under and is shared across
sessions (and tasks) by `shared_name`. The orders are the C++ queue's (src/ops/fifo_queue.h)."""

from tensorweave import raw_ops
from tensorweave.framework import dtypes as dtypes_lib
from tensorweave.framework import ops
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor


class QueueBase:
    def __init__(self, dtypes, shapes, names, queue_ref):
        self._dtypes = dtypes
        self._shapes = shapes
        self._names = names
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]  # ops are named in the current scope

    @property
    def queue_ref(self):
        return self._queue_ref

    @property
    def name(self):
        return self._name

    @property
    def dtypes(self):
        return self._dtypes

    @property
    def shapes(self):
        return self._shapes

    @property
    def names(self):
        return self._names

    def _components(self, vals):
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names) != sorted(vals.keys()):
                raise ValueError("Keys in dictionary to enqueue do not match names of Queue.  "
                                 "Dictionary: (%s), Queue: (%s)" % (sorted(vals.keys()),
                                                                     sorted(self._names)))
            vals = [vals[k] for k in self._names]
        elif self._names:
            raise ValueError("You must enqueue a dictionary in a Queue with names")
        elif not isinstance(vals, (list, tuple)):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError("Expected %d components to enqueue, got %d" %
                             (len(self._dtypes), len(vals)))
        return [convert_to_tensor(v, dtype=d) for v, d in zip(vals, self._dtypes)]

    def _check_shapes(self, tensors, many):
        for i, (t, shape) in enumerate(zip(tensors, self._shapes)):
            have = t.shape
            if many and have.ndims is not None:
                have = have[1:] if have.ndims > 0 else have
            if not have.is_compatible_with(shape):
                raise ValueError("Shapes %s and %s are incompatible" % (have, shape))

    def enqueue(self, vals, name=None):
        with ops.name_scope(name, "%s_enqueue" % self._name) as scope:
            components = self._components(vals)
            self._check_shapes(components, many=False)
            return raw_ops.QueueEnqueue(handle=self._queue_ref, components=components,
                                        name=scope)

    def enqueue_many(self, vals, name=None):
        with ops.name_scope(name, "%s_EnqueueMany" % self._name) as scope:
            components = self._components(vals)
            self._check_shapes(components, many=True)
            return raw_ops.QueueEnqueueMany(handle=self._queue_ref, components=components,
                                            name=scope)

    def _dequeued(self, outputs):
        outputs = outputs if isinstance(outputs, list) else [outputs]
        if self._names:
            return dict(zip(self._names, outputs))
        return outputs[0] if len(outputs) == 1 else outputs

    def dequeue(self, name=None):
        out = raw_ops.QueueDequeue(handle=self._queue_ref, component_types=self._dtypes,
                                   name=name or "%s_Dequeue" % self._name)
        return self._dequeued(out)

    def dequeue_many(self, n, name=None):
        out = raw_ops.QueueDequeueMany(handle=self._queue_ref, n=n,
                                       component_types=self._dtypes,
                                       name=name or "%s_DequeueMany" % self._name)
        return self._dequeued(out)

    def dequeue_up_to(self, n, name=None):
        out = raw_ops.QueueDequeueUpTo(handle=self._queue_ref, n=n,
                                       component_types=self._dtypes,
                                       name=name or "%s_DequeueUpTo" % self._name)
        return self._dequeued(out)

    def close(self, cancel_pending_enqueues=False, name=None):
        return raw_ops.QueueClose(handle=self._queue_ref,
                                  cancel_pending_enqueues=cancel_pending_enqueues,
                                  name=name or "%s_Close" % self._name)

    def size(self, name=None):
        return raw_ops.QueueSize(handle=self._queue_ref, name=name or "%s_Size" % self._name)

    def is_closed(self, name=None):
        return raw_ops.QueueIsClosed(handle=self._queue_ref,
                                     name=name or "%s_IsClosed" % self._name)


def _dtype_list(dtypes):
    return [dtypes_lib.as_dtype(d) for d in (dtypes if isinstance(dtypes, (list, tuple))
                                             else [dtypes])]


def _shape_list(shapes, dtypes, unknown_dims_allowed=False):
    if shapes is None:
        return [tensor_shape.unknown_shape() for _ in dtypes]
    shapes = list(shapes)
    if shapes and not isinstance(shapes[0], (list, tuple, tensor_shape.TensorShape)):
        shapes = [shapes]
    shapes = [tensor_shape.as_shape(s) for s in shapes]
    if len(shapes) != len(dtypes):
        raise ValueError("Queue shapes must have the same length as dtypes")
    if not unknown_dims_allowed and not all(s.is_fully_defined() for s in shapes):
        raise ValueError("All shapes must be fully defined: %s" % shapes)
    return shapes


def _name_list(names, dtypes):
    if names is None:
        return None
    names = list(names) if isinstance(names, (list, tuple)) else [names]
    if len(names) != len(dtypes):
        raise ValueError("Queue names must have the same length as dtypes")
    return names


def _shape_attr(shapes):
    """The shapes attribute: every component's (-1 for an unknown dimension), or none."""
    if any(s.dims is None for s in shapes):
        return []
    return [[-1 if d.value is None else d.value for d in s.dims] for s in shapes]


class FIFOQueue(QueueBase):
    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        dtypes = _dtype_list(dtypes)
        shapes = _shape_list(shapes, dtypes)
        names = _name_list(names, dtypes)
        with ops.control_dependencies(None):  # as TF's init_scope
            ref = raw_ops.FIFOQueue(component_types=dtypes, shapes=_shape_attr(shapes),
                                    capacity=capacity, shared_name=shared_name or "", name=name)
        super().__init__(dtypes, shapes, names, ref)


class PaddingFIFOQueue(QueueBase):
    """A FIFO queue whose components may have unknown dimensions (None); dequeue_many pads
    every component to the batch's largest shape with zeros (empty strings)."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        dtypes = _dtype_list(dtypes)
        shapes = _shape_list(shapes, dtypes, unknown_dims_allowed=True)
        if any(s.dims is None for s in shapes):
            raise ValueError("Shapes must have a known rank in a PaddingFIFOQueue: %s" % shapes)
        names = _name_list(names, dtypes)
        with ops.control_dependencies(None):
            ref = raw_ops.PaddingFIFOQueue(component_types=dtypes, shapes=_shape_attr(shapes),
                                           capacity=capacity, shared_name=shared_name or "",
                                           name=name)
        super().__init__(dtypes, shapes, names, ref)


class RandomShuffleQueue(QueueBase):
    """A queue that dequeues a uniformly random element; dequeues wait while it holds no
    more than min_after_dequeue, until it is closed."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None,
                 shared_name=None, name="random_shuffle_queue"):
        from tensorweave.ops import random_ops  # noqa: PLC0415 (random_ops imports this)
        dtypes = _dtype_list(dtypes)
        shapes = _shape_list(shapes, dtypes)
        names = _name_list(names, dtypes)
        seed1, seed2 = random_ops._seeds(seed)
        with ops.control_dependencies(None):
            ref = raw_ops.RandomShuffleQueue(
                component_types=dtypes, shapes=_shape_attr(shapes), capacity=capacity,
                min_after_dequeue=min_after_dequeue, seed=seed1, seed2=seed2,
                shared_name=shared_name or "", name=name)
        super().__init__(dtypes, shapes, names, ref)


class PriorityQueue(QueueBase):
    """A queue of (int64 priority, components...) that dequeues the smallest priority first;
    enqueue tuples whose first element is the priority."""

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None,
                 name="priority_queue"):
        types = _dtype_list(types) if types else []
        if shapes is None:
            raise ValueError("PriorityQueue needs shapes, one per component")
        shapes = _shape_list(shapes, types) if types else []
        with ops.control_dependencies(None):
            ref = raw_ops.PriorityQueue(component_types=types, shapes=_shape_attr(shapes),
                                        capacity=capacity, shared_name=shared_name or "",
                                        name=name)
        super().__init__([dtypes_lib.int64] + types,
                         [tensor_shape.scalar()] + shapes, _name_list(names, types), ref)
