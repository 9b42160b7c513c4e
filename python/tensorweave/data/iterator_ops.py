"""tf.data iterators in graph mode, as TF 1.x's tf.data.Iterator: one-shot, initializable
and from_structure (reinitializable) iterators over the C++ iterator ops
(src/data/iterator_ops.cc). get_next raises OutOfRangeError after the last element."""

from tensorweave import raw_ops
from tensorweave.data import nest
from tensorweave.data import structure
from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework import tensor_shape


def _shape_attr(shapes):
    return [[-1 if d.value is None else d.value for d in s.dims] if s.dims is not None
            else None for s in shapes]


class Iterator:
    def __init__(self, iterator_resource, initializer, output_types, output_shapes,
                 output_classes=None):
        self._resource = iterator_resource
        self._initializer = initializer
        self._types = output_types
        self._shapes = output_shapes
        self._classes = structure.classes_or_default(output_classes, output_types)

    @staticmethod
    def _attrs(types, shapes, classes):
        """The iterator ops' attributes: the components' types and shapes."""
        flat_shapes = structure.wire_shapes(shapes, classes)
        attrs = {"output_types": structure.wire_types(types, classes)}
        if all(s.dims is not None for s in flat_shapes):
            attrs["output_shapes"] = _shape_attr(flat_shapes)
        return attrs

    @classmethod
    def _one_shot(cls, dataset):
        serialized, inputs = dataset._serialize()
        with ops.control_dependencies(None):
            op = ops.get_default_graph().create_op(
                "OneShotIterator", [list(inputs)],
                dict(cls._attrs(dataset.output_types, dataset.output_shapes,
                                dataset.output_classes),
                     dataset=serialized, Tcaptures=[t.dtype for t in inputs]),
                name="OneShotIterator")
        return cls(op.outputs[0], None, dataset.output_types, dataset.output_shapes,
                   dataset.output_classes)

    @classmethod
    def _initializable(cls, dataset, shared_name=None):
        it = cls.from_structure(dataset.output_types, dataset.output_shapes,
                                shared_name=shared_name,
                                output_classes=dataset.output_classes)
        it._initializer = it.make_initializer(dataset)
        return it

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None,
                       output_classes=None):
        """An iterator of this element structure, initialized by make_initializer(dataset)
        with any dataset of that structure (a reinitializable iterator)."""
        output_types, output_shapes = _structure(output_types, output_shapes)
        output_classes = structure.classes_or_default(output_classes, output_types)
        with ops.control_dependencies(None):
            op = ops.get_default_graph().create_op(
                "Iterator", [], dict(Iterator._attrs(output_types, output_shapes,
                                                     output_classes),
                                     shared_name=shared_name or ""), name="Iterator")
        return Iterator(op.outputs[0], None, output_types, output_shapes, output_classes)

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None,
                           output_classes=None):
        """An iterator whose elements come from whichever iterator the fed string handle
        (Iterator.string_handle()) names: a feedable iterator."""
        output_types, output_shapes = _structure(output_types, output_shapes)
        output_classes = structure.classes_or_default(output_classes, output_types)
        op = ops.get_default_graph().create_op(
            "IteratorFromStringHandle", [string_handle],
            Iterator._attrs(output_types, output_shapes, output_classes),
            name="IteratorFromStringHandle")
        return Iterator(op.outputs[0], None, output_types, output_shapes, output_classes)

    def string_handle(self, name=None):
        """This iterator's handle as a string tensor, to feed a from_string_handle one."""
        return ops.get_default_graph().create_op(
            "IteratorToStringHandle", [self._resource], {},
            name=name or "IteratorToStringHandle").outputs[0]

    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    output_types = property(lambda self: self._types)
    output_shapes = property(lambda self: self._shapes)

    output_classes = property(lambda self: self._classes)

    def make_initializer(self, dataset, name=None):
        """An op that (re)starts this iterator on `dataset`'s first element."""
        if nest.flatten(dataset.output_types) != nest.flatten(self._types):
            raise TypeError("Expected output types %r but got dataset with output types %r." %
                            (self._types, dataset.output_types))
        if nest.flatten(dataset.output_classes) != nest.flatten(self._classes):
            raise TypeError("Expected output classes %r but got dataset with output classes "
                            "%r." % (self._classes, dataset.output_classes))
        serialized, inputs = dataset._serialize()
        return ops.get_default_graph().create_op(
            "MakeIterator", [self._resource, list(inputs)],
            {"dataset": serialized, "Tcaptures": [t.dtype for t in inputs]},
            name=name or "MakeIterator")

    def get_next(self, name=None):
        """The next element, in the dataset's structure; OutOfRangeError at the end."""
        attrs = Iterator._attrs(self._types, self._shapes, self._classes)
        op = ops.get_default_graph().create_op("IteratorGetNext", [self._resource], attrs,
                                               name=name or "IteratorGetNext")
        return structure.from_wire(self._types, self._classes, op.outputs)


def _structure(output_types, output_shapes):
    """The element structure's types (DTypes) and shapes (TensorShapes, unknown if None)."""
    output_types = nest.map_structure(dtypes.as_dtype, output_types)
    if output_shapes is None:
        return output_types, nest.map_structure(lambda _: tensor_shape.unknown_shape(),
                                                output_types)
    return output_types, nest.pack_sequence_as(output_types, [
        tensor_shape.as_shape(s) for s in nest.flatten_up_to(output_types, output_shapes)])


def make_one_shot_iterator(dataset):
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset, shared_name=None):
    return dataset.make_initializable_iterator(shared_name)


def get_output_types(dataset_or_iterator):
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes
