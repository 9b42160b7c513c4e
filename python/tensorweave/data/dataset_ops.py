"""tf.data.Dataset with TF 1.x's API, over tensorweave's C++ datasets (src/data). A Dataset
here is a description: its op, attributes, input datasets, the outer tensors it reads and
its traced functions. An iterator op carries the whole pipeline as one serialized
DatasetDef (tensorweave/protobuf/dataset.proto) with those tensors as inputs; the C++
runtime builds and runs it. map and filter functions are traced once into graphs and run
by the runtime, never called back in Python."""

import numbers

import numpy as np

from tensorweave.data import nest
from tensorweave.data import structure as _structure
from tensorweave.framework import dtypes
from tensorweave.framework import func_graph
from tensorweave.framework import ops
from tensorweave.framework import sparse_tensor
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.protobuf import dataset_pb2
from tensorweave.protobuf import graph_pb2

AUTOTUNE = -1


def _attr(value):
    """An AttrValue proto for a dataset attribute."""
    a = graph_pb2.AttrValue()
    if isinstance(value, bool):
        a.b = value
    elif isinstance(value, int):
        a.i = value
    elif isinstance(value, (str, bytes)):
        a.s = value.encode() if isinstance(value, str) else value
    elif isinstance(value, list) and value and all(isinstance(v, float) for v in value):
        a.list.f.extend(value)
    elif isinstance(value, list) and value and all(isinstance(v, int) for v in value):
        a.list.i.extend(value)
    elif isinstance(value, list):  # shapes
        for shape in value:
            s = a.list.shape.add()
            if shape.dims is None:
                s.unknown_rank = True
            else:
                for d in shape.dims:
                    s.dim.append(-1 if d.value is None else d.value)
    else:
        raise TypeError("unsupported dataset attribute %r" % (value,))
    return a


def _as_structure(value, name):
    """An element structure of tensors and SparseTensors from `value` (lists become
    tensors, as in tf.data)."""
    if isinstance(value, sparse_tensor.SparseTensor):
        return value
    if isinstance(value, sparse_tensor.SparseTensorValue):
        return sparse_tensor.SparseTensor.from_value(value)
    if isinstance(value, dict):
        return {k: _as_structure(v, "%s_%s" % (name, k)) for k, v in value.items()}
    if isinstance(value, tuple):
        items = [_as_structure(v, "%s_%d" % (name, i)) for i, v in enumerate(value)]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return convert_to_tensor(value, name=name)


class _Function:
    """A function traced once into a graph of its own: the element's components come in
    through Placeholders, captured outer tensors through more."""

    def __init__(self, fn, input_types, input_shapes, input_classes, what):
        self.what = what
        outer = ops.get_default_graph()
        self.graph = func_graph.FuncGraph(what, outer)
        args = []
        with self.graph.as_default():
            for i, (t, s) in enumerate(zip(_structure.wire_types(input_types, input_classes),
                                           _structure.wire_shapes(input_shapes,
                                                                  input_classes))):
                attrs = {"dtype": t}
                if s.dims is not None:
                    attrs["shape"] = [-1 if d.value is None else d.value for d in s.dims]
                args.append(self.graph.create_op("Placeholder", [], attrs,
                                                 name="arg%d" % i).outputs[0])
            packed = _structure.from_wire(input_types, input_classes, args)
            # As tf.data: a tuple element is passed as separate arguments.
            if isinstance(packed, tuple) and not hasattr(packed, "_fields"):
                result = fn(*packed)
            else:
                result = fn(packed)
            self.made_dataset = None
            if isinstance(result, Dataset):  # flat_map, interleave: the dataset's inputs
                made_inputs = _Inputs()
                self.made_dataset = result._to_proto(made_inputs)
                self.made_types, self.made_shapes = result.output_types, result.output_shapes
                self.made_classes = result.output_classes
                result = tuple(self.graph.capture(t) for t in made_inputs.tensors)
            if isinstance(result, list):
                result = tuple(result)  # as TF 1.x: a returned list is a tuple
            result = _as_structure(result, "output")
            outputs = [array_ops.identity(t) if t.op.type == "Placeholder" else t
                       for t in _structure.to_wire(result)]
        self.args = [a.op.name for a in args]
        self.output_classes = _structure.classes_of(result)
        self.output_structure = _structure.from_wire(result, self.output_classes, outputs)
        self.outputs = outputs

    def to_proto(self, inputs):
        f = dataset_pb2.DatasetFunction()
        f.graph.CopyFrom(self.graph.as_graph_def())
        f.args.extend(self.args)
        for outer, placeholder in self.graph.captures:
            f.captures.append(placeholder)
            f.capture_inputs.append(inputs.add(outer))
        f.outputs.extend(t.name for t in self.outputs)
        if self.made_dataset is not None:
            f.output_dataset.CopyFrom(self.made_dataset)
        return f


class _Inputs:
    """The outer tensors a pipeline reads, by position (each once)."""

    def __init__(self):
        self.tensors = []
        self._index = {}

    def add(self, tensor):
        if id(tensor) not in self._index:
            self._index[id(tensor)] = len(self.tensors)
            self.tensors.append(tensor)
        return self._index[id(tensor)]


def _int_params(inputs, **params):
    """Attributes for integer parameters given as Python (or numpy) ints; a tensor (tf.data
    takes either, e.g. a placeholder batch size) becomes an input of the dataset, which
    attribute <name>_input points to (after `inputs`, the node's other inputs)."""
    attrs, inputs = {}, list(inputs)
    for name, value in params.items():
        if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool):
            attrs[name] = int(value)
            continue
        tensor = convert_to_tensor(value, dtype=dtypes.int64, name=name)
        if tensor.shape.ndims not in (None, 0):
            raise ValueError("%s must be a scalar, got shape %s" % (name, tensor.shape))
        attrs[name + "_input"] = len(inputs)
        inputs.append(tensor)
    return attrs, inputs


def _static_int(value):
    """`value` as an int when it is one (not a tensor), else None."""
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool):
        return int(value)
    return None


class Dataset:
    """A dataset: its element structure (output_types, output_shapes) and how it is made."""

    def __init__(self, op, children=(), inputs=(), attrs=None, functions=(), types=None,
                 shapes=None, classes=None):
        self._op = op
        self._children = list(children)
        self._inputs = list(inputs)
        self._attrs = dict(attrs or {})
        self._functions = list(functions)
        self._types = types
        self._shapes = shapes
        self._classes = _structure.classes_or_default(classes, types)

    # ---- the element structure ----
    @property
    def output_types(self):
        return self._types

    @property
    def output_shapes(self):
        return self._shapes

    @property
    def output_classes(self):
        return self._classes

    def _to_proto(self, inputs):
        d = dataset_pb2.DatasetDef()
        d.op = self._op
        d.inputs.extend(inputs.add(t) for t in self._inputs)
        for k, v in self._attrs.items():
            d.attrs[k].CopyFrom(_attr(v))
        for c in self._children:
            d.children.add().CopyFrom(c._to_proto(inputs))
        for f in self._functions:
            d.functions.add().CopyFrom(f.to_proto(inputs))
        return d

    def _serialize(self):
        inputs = _Inputs()
        return self._to_proto(inputs).SerializeToString(), inputs.tensors

    def _derived(self, op, attrs=None, functions=(), types=None, shapes=None, inputs=(),
                 classes=None):
        return Dataset(op, [self], inputs, attrs, functions,
                       self._types if types is None else types,
                       self._shapes if shapes is None else shapes,
                       self._classes if classes is None else classes)

    def _no_sparse(self, what):
        if _structure.any_sparse(self._classes):
            raise TypeError("%s is not supported for datasets with SparseTensor "
                            "components" % what)

    # ---- sources ----
    @staticmethod
    def from_tensor_slices(tensors):
        structure = _as_structure(tensors, "component")
        if _structure.any_sparse(_structure.classes_of(structure)):
            raise NotImplementedError("Dataset.from_tensor_slices of a SparseTensor is not in "
                                      "tensorweave; slice the dense tensor, or make the "
                                      "SparseTensor in a map function")
        flat = nest.flatten(structure)
        first = None
        for t in flat:
            if t.shape.ndims == 0:
                raise ValueError("Dataset.from_tensor_slices needs tensors of rank >= 1, got "
                                 "%s" % t)
            dim = t.shape[0].value if t.shape.ndims is not None else None
            if first is not None and dim is not None and first != dim:
                raise ValueError("Dimensions %d and %d are not compatible" % (first, dim))
            first = first if first is not None else dim
        return Dataset("TensorSlice", [], flat, {},
                       types=nest.map_structure(lambda t: t.dtype, structure),
                       shapes=nest.map_structure(
                           lambda t: t.shape[1:] if t.shape.ndims is not None
                           else tensor_shape.unknown_shape(), structure))

    @staticmethod
    def from_tensors(tensors):
        structure = _as_structure(tensors, "component")
        return Dataset("Tensors", [], _structure.to_wire(structure), {},
                       types=nest.map_structure(lambda t: t.dtype, structure),
                       shapes=nest.map_structure(lambda t: t.shape, structure),
                       classes=_structure.classes_of(structure))

    @staticmethod
    def range(*args):
        if len(args) == 1:
            start, stop, step = 0, args[0], 1
        elif len(args) == 2:
            (start, stop), step = args, 1
        elif len(args) == 3:
            start, stop, step = args
        else:
            raise ValueError("Invalid arguments to Dataset.range: %s" % (args,))
        inputs = [convert_to_tensor(v, dtype=dtypes.int64, name=n)
                  for v, n in ((start, "start"), (stop, "stop"), (step, "step"))]
        return Dataset("Range", [], inputs, {}, types=dtypes.int64,
                       shapes=tensor_shape.TensorShape([]))

    @staticmethod
    def zip(datasets):
        flat = nest.flatten(datasets)
        if not all(isinstance(d, Dataset) for d in flat):
            raise TypeError("Dataset.zip takes a (nested) structure of datasets")
        return Dataset("Zip", flat, types=nest.pack_sequence_as(
            datasets, [d._types for d in flat]), shapes=nest.pack_sequence_as(
            datasets, [d._shapes for d in flat]), classes=nest.pack_sequence_as(
            datasets, [d._classes for d in flat]))

    @staticmethod
    def from_generator(generator, output_types, output_shapes=None, args=None):
        """The elements `generator()` (or `generator(*args)`) yields, a new pass for each
        iterator. It runs in this process, on the tf.data iterator's thread (with the
        GIL); its elements are checked against output_types and output_shapes."""
        from tensorweave import _native
        if not callable(generator):
            raise TypeError("`generator` must be callable.")
        from tensorweave.data import iterator_ops
        types, shapes = iterator_ops._structure(output_types, output_shapes)
        if args is not None and any(isinstance(a, ops.Tensor) for a in args):
            raise NotImplementedError("from_generator's args must be Python values here (not "
                                      "tensors)")
        flat_types, flat_shapes = nest.flatten(types), nest.flatten(shapes)
        structured = nest.is_sequence(types)

        def make_iterator():
            values = generator(*args) if args is not None else generator()
            for value in values:
                if structured:
                    if isinstance(value, list):
                        value = tuple(value)
                    flat = nest.flatten(value)
                else:
                    flat = [value]
                if len(flat) != len(flat_types):
                    raise ValueError("`generator` yielded an element that did not match the "
                                     "expected structure: %r" % (value,))
                out = []
                for v, t, s in zip(flat, flat_types, flat_shapes):
                    array = np.asarray(v, dtype=object if t == dtypes.string
                                       else t.as_numpy_dtype)
                    if s.dims is not None and not s.is_compatible_with(
                            tensor_shape.TensorShape(list(array.shape))):
                        raise ValueError("`generator` yielded an element of shape %s where "
                                         "an element of shape %s was expected." %
                                         (tuple(array.shape), s))
                    out.append(array)
                yield out

        generator_id = _native.register_generator(
            make_iterator, [t.as_datatype_enum for t in flat_types])
        return Dataset("Generator", [], [], {"id": generator_id}, types=types, shapes=shapes)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        """The files matching the pattern(s), found now (TF lists them when the iterator
        starts); shuffled unless shuffle=False."""
        from tensorweave.platform import gfile
        patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(
            file_pattern)
        files = sorted({f for p in patterns for f in gfile.Glob(
            p.decode() if isinstance(p, bytes) else p)})
        if not files:
            raise ValueError("No files matched pattern: %s" % ", ".join(map(str, patterns)))
        dataset = Dataset.from_tensor_slices(np.array(files, dtype=object))
        if shuffle is None or shuffle:
            dataset = dataset.shuffle(len(files), seed=seed)
        return dataset

    # ---- transformations ----
    def map(self, map_func, num_parallel_calls=None):
        fn = _Function(map_func, self._types, self._shapes, self._classes, "map function")
        structure = fn.output_structure
        parallel = 1 if num_parallel_calls is None else int(num_parallel_calls)
        if parallel == AUTOTUNE:
            import os
            parallel = os.cpu_count() or 1
        return self._derived("Map", {"num_parallel_calls": max(1, parallel)}, [fn],
                             types=nest.map_structure(lambda t: t.dtype, structure),
                             shapes=nest.map_structure(lambda t: t.shape, structure),
                             classes=fn.output_classes)

    def filter(self, predicate):
        fn = _Function(predicate, self._types, self._shapes, self._classes,
                       "filter predicate")
        out = nest.flatten(fn.output_structure)
        if len(out) != 1 or out[0].dtype != dtypes.bool or out[0].shape.ndims not in (0, None):
            raise ValueError("`predicate` must return a scalar boolean tensor.")
        return self._derived("Filter", functions=[fn])

    def _made_by(self, op, fn_, what, attrs):
        fn = _Function(fn_, self._types, self._shapes, self._classes, what)
        if fn.made_dataset is None:
            raise TypeError("`map_func` must return a `Dataset` object.")
        return Dataset(op, [self], [], attrs, [fn], fn.made_types, fn.made_shapes,
                       fn.made_classes)

    def flat_map(self, map_func):
        """The elements of the dataset map_func makes of each element, in turn."""
        return self._made_by("FlatMap", map_func, "flat_map function", {})

    def interleave(self, map_func, cycle_length=None, block_length=1,
                   num_parallel_calls=None):
        """The datasets map_func makes of cycle_length elements at a time, block_length
        elements from each in turn (TF 1.x's deterministic order)."""
        if cycle_length is None or cycle_length == AUTOTUNE:
            import os
            cycle_length = os.cpu_count() or 1
        return self._made_by("Interleave", map_func, "interleave function",
                             {"cycle_length": int(cycle_length),
                              "block_length": int(block_length)})

    def _batched_shapes(self, batch_size, drop_remainder):
        first = batch_size if drop_remainder else None
        return nest.map_structure(lambda s: _prepend(first, s), self._shapes)

    def batch(self, batch_size, drop_remainder=False):
        attrs, inputs = _int_params([], batch_size=batch_size)
        attrs["drop_remainder"] = bool(drop_remainder)
        sparse = _structure.sparse_components(self._classes)
        if sparse:  # batched as SparseTensors one rank up (src/data/transform_datasets.cc)
            attrs["sparse_components"] = sparse
        return self._derived("Batch", attrs, inputs=inputs,
                             shapes=self._batched_shapes(_static_int(batch_size),
                                                         drop_remainder))

    def unbatch(self):
        """Each row of the elements (split along their first dimension) as an element."""
        self._no_sparse("unbatch")
        for shape in nest.flatten(self._shapes):
            if shape.ndims == 0:
                raise ValueError("Cannot unbatch an input with scalar components.")
        return self._derived("Unbatch", shapes=nest.map_structure(
            lambda s: s[1:] if s.ndims is not None else s, self._shapes))

    def padded_batch(self, batch_size, padded_shapes, padding_values=None,
                     drop_remainder=False):
        if _structure.any_sparse(self._classes):
            raise TypeError("Batching of padded sparse tensors is not currently supported")
        shapes = _padded_shapes(self._types, padded_shapes)
        if padding_values is None:
            padding_values = nest.map_structure(
                lambda t: b"" if t == dtypes.string else np.zeros([], t.as_numpy_dtype),
                self._types)
        values = [convert_to_tensor(v, dtype=t, name="padding_value") for v, t in
                  zip(nest.flatten(padding_values), nest.flatten(self._types))]
        first = _static_int(batch_size) if drop_remainder else None
        out_shapes = nest.pack_sequence_as(self._types, [_prepend(first, s)
                                                         for s in nest.flatten(shapes)])
        attrs, inputs = _int_params(values, batch_size=batch_size)
        attrs.update({"drop_remainder": bool(drop_remainder),
                      "padded_shapes": nest.flatten(shapes)})
        return self._derived("PaddedBatch", attrs, shapes=out_shapes, inputs=inputs)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None):
        from tensorweave.ops import random_ops
        seed1, seed2 = random_ops._seeds(seed)
        attrs, inputs = _int_params([], buffer_size=buffer_size)
        attrs.update({"seed": seed1, "seed2": seed2,
                      "reshuffle_each_iteration": True if reshuffle_each_iteration is None
                      else bool(reshuffle_each_iteration)})
        return self._derived("Shuffle", attrs, inputs=inputs)

    def _counted(self, op, **params):
        attrs, inputs = _int_params([], **params)
        return self._derived(op, attrs, inputs=inputs)

    def repeat(self, count=None):
        return self._counted("Repeat", count=-1 if count is None else count)

    def take(self, count):
        return self._counted("Take", count=count)

    def skip(self, count):
        return self._counted("Skip", count=count)

    def shard(self, num_shards, index):
        return self._counted("Shard", num_shards=num_shards, index=index)

    def prefetch(self, buffer_size):
        return self._counted("Prefetch", buffer_size=buffer_size)

    def cache(self, filename=""):
        return self._derived("Cache", {"filename": filename})

    def concatenate(self, dataset):
        if nest.flatten(self._types) != nest.flatten(dataset._types):
            raise TypeError("Two datasets to concatenate have different types %s and %s" %
                            (self._types, dataset._types))
        if nest.flatten(self._classes) != nest.flatten(dataset._classes):
            raise TypeError("Two datasets to concatenate have different classes %s and %s" %
                            (self._classes, dataset._classes))
        shapes = nest.pack_sequence_as(self._types, [
            _most_specific(a, b)
            for a, b in zip(nest.flatten(self._shapes), nest.flatten(dataset._shapes))])
        return Dataset("Concatenate", [self, dataset], types=self._types, shapes=shapes,
                       classes=self._classes)

    def apply(self, transformation_func):
        dataset = transformation_func(self)
        if not isinstance(dataset, Dataset):
            raise TypeError("`transformation_func` must return a Dataset.")
        return dataset

    # ---- iterators ----
    def make_one_shot_iterator(self):
        from tensorweave.data import iterator_ops
        return iterator_ops.Iterator._one_shot(self)

    def make_initializable_iterator(self, shared_name=None):
        from tensorweave.data import iterator_ops
        return iterator_ops.Iterator._initializable(self, shared_name)

    def __iter__(self):
        raise RuntimeError("__iter__() is only supported inside of tf.function or when eager "
                           "execution is enabled; in graph mode make an iterator "
                           "(make_one_shot_iterator, make_initializable_iterator)")


def _prepend(dim, shape):
    if shape.dims is None:
        return tensor_shape.unknown_shape()
    return tensor_shape.TensorShape([dim] + [d.value for d in shape.dims])


def _most_specific(a, b):
    """The shape both `a` and `b` have: their agreeing dimensions, None where they differ."""
    if a.dims is None or b.dims is None or len(a.dims) != len(b.dims):
        return tensor_shape.unknown_shape()
    return tensor_shape.TensorShape([x.value if x.value == y.value else None
                                     for x, y in zip(a.dims, b.dims)])


def _padded_shapes(types, padded_shapes):
    """padded_shapes in the structure of `types`, each a TensorShape."""
    if isinstance(types, dict):
        return {k: _padded_shapes(types[k], padded_shapes[k]) for k in types}
    if isinstance(types, tuple):
        return tuple(_padded_shapes(t, p) for t, p in zip(types, padded_shapes))
    if isinstance(padded_shapes, ops.Tensor):
        raise TypeError("padded_shapes must be known when the graph is built")
    return tensor_shape.as_shape(padded_shapes)


# TF 1.x's names for the same class.
DatasetV1 = Dataset
