"""Static shapes: TensorShape and Dimension, where None is an unknown size or rank."""


class Dimension:
    def __init__(self, value):
        self._value = None if value is None or value == -1 else int(value)

    @property
    def value(self):
        return self._value

    def is_compatible_with(self, other):
        other = as_dimension(other)
        return self._value is None or other.value is None or self._value == other.value

    def __eq__(self, other):
        other = as_dimension(other)
        if self._value is None or other.value is None:
            return None
        return self._value == other.value

    def __int__(self):
        return self._value

    def __index__(self):
        return self._value

    def __repr__(self):
        return "Dimension(%r)" % (self._value,)

    def __str__(self):
        return "?" if self._value is None else str(self._value)


def as_dimension(value):
    return value if isinstance(value, Dimension) else Dimension(value)


class TensorShape:
    """A shape that may be partly known: `dims` is None for an unknown rank."""

    def __init__(self, dims):
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        else:
            try:
                self._dims = [as_dimension(d) for d in dims]
            except TypeError:
                self._dims = [as_dimension(dims)]

    @property
    def dims(self):
        return self._dims

    @property
    def ndims(self):
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return [d.value for d in self._dims]

    def is_fully_defined(self):
        return self._dims is not None and all(d.value is not None for d in self._dims)

    def concatenate(self, other):
        """This shape's dimensions, then `other`'s; unknown when either rank is (TF's)."""
        other = as_shape(other)
        if self._dims is None or other.dims is None:
            return unknown_shape()
        return TensorShape(self._dims + other.dims)

    def is_compatible_with(self, other):
        other = as_shape(other)
        if self._dims is None or other.dims is None:
            return True
        return len(self._dims) == len(other.dims) and all(
            a.is_compatible_with(b) for a, b in zip(self._dims, other.dims))

    def merge_with(self, other):
        other = as_shape(other)
        if self._dims is None:
            return other
        if other.dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError("Shapes %s and %s are not compatible" % (self, other))
        return TensorShape([a.value if a.value is not None else b.value
                            for a, b in zip(self._dims, other.dims)])

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError("Shapes %s and %s are incompatible" % (self, as_shape(other)))

    def assert_is_fully_defined(self):
        if not self.is_fully_defined():
            raise ValueError("Shape %s is not fully defined" % self)

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d.value
        return n

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of Shape with unknown rank.")
        return len(self._dims)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else Dimension(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except TypeError:
            return NotImplemented
        if self._dims is None or other.dims is None:
            return self._dims is None and other.dims is None
        return [d.value for d in self._dims] == [d.value for d in other.dims]

    def __hash__(self):
        return hash(None if self._dims is None else tuple(d.value for d in self._dims))

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        return "TensorShape(%r)" % ([d for d in self._dims],)

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return "(%s,)" % self._dims[0]
        return "(%s)" % ", ".join(str(d) for d in self._dims)


def as_shape(shape):
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape():
    return TensorShape(None)


def scalar():
    return TensorShape([])
