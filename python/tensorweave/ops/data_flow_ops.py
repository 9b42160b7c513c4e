"""FIFOQueue with TF 1.x's names and semantics; the queue lives on the device it was
created under and is shared across sessions (and tasks) by `shared_name`."""

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


class FIFOQueue(QueueBase):
    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        dtypes = [dtypes_lib.as_dtype(d) for d in (dtypes if isinstance(dtypes, (list, tuple))
                                                   else [dtypes])]
        if shapes is not None:
            shapes = list(shapes)
            if shapes and not isinstance(shapes[0], (list, tuple, tensor_shape.TensorShape)):
                shapes = [shapes]
            shapes = [tensor_shape.as_shape(s) for s in shapes]
            if len(shapes) != len(dtypes):
                raise ValueError("Queue shapes must have the same length as dtypes")
            if not all(s.is_fully_defined() for s in shapes):
                raise ValueError("All shapes must be fully defined: %s" % shapes)
        else:
            shapes = [tensor_shape.unknown_shape() for _ in dtypes]
        if names is not None:
            names = list(names) if isinstance(names, (list, tuple)) else [names]
            if len(names) != len(dtypes):
                raise ValueError("Queue names must have the same length as dtypes")
        known = [s for s in shapes if s.dims is not None]
        with ops.control_dependencies(None):  # as TF's init_scope
            ref = raw_ops.FIFOQueue(component_types=dtypes,
                                    shapes=known if len(known) == len(shapes) else [],
                                    capacity=capacity, shared_name=shared_name or "", name=name)
        super().__init__(dtypes, shapes, names, ref)
