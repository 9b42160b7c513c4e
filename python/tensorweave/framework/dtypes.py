"""Data types with TF 1.x's names: `float32` (also `float`), `int32`, `string`, ..."""

import numpy as np


class DType:
    """One of the runtime's element types. Compares equal to others of the same enum."""

    def __init__(self, enum, name, numpy_dtype):
        self._enum = enum
        self._name = name
        self._numpy = numpy_dtype

    @property
    def name(self):
        return self._name

    @property
    def as_datatype_enum(self):
        return self._enum

    @property
    def as_numpy_dtype(self):
        return self._numpy

    @property
    def base_dtype(self):
        return self

    @property
    def size(self):
        """Bytes per element, as TF's DType.size: numpy's item size (a pointer for strings),
        1 for resource handles."""
        if self is resource:
            return 1
        return np.dtype(self._numpy).itemsize

    @property
    def is_floating(self):
        return self._enum in (1, 2)

    @property
    def is_integer(self):
        return self._enum in (3, 4, 5, 6, 9, 17)

    @property
    def is_complex(self):
        return self._enum in (8, 18)

    @property
    def is_unsigned(self):
        """True for uint8 and uint16 (TF: False for every non-integer type)."""
        return self._enum in (4, 17)

    @property
    def is_numpy_compatible(self):
        return self is not resource

    @property
    def real_dtype(self):
        """float32 for complex64, float64 for complex128, the type itself otherwise."""
        return {8: float32, 18: float64}.get(self._enum, self)

    @property
    def is_bool(self):
        return self._enum == 10

    @property
    def min(self):
        """The smallest value, for floating and integer types; TypeError for others (bool,
        string, complex), as TF."""
        if self.is_floating:
            return np.finfo(self._numpy).min
        if self.is_integer:
            return np.iinfo(self._numpy).min
        raise TypeError("Cannot find minimum value of %s." % self)

    @property
    def max(self):
        if self.is_floating:
            return np.finfo(self._numpy).max
        if self.is_integer:
            return np.iinfo(self._numpy).max
        raise TypeError("Cannot find maximum value of %s." % self)

    def is_compatible_with(self, other):
        return self == as_dtype(other)

    def __eq__(self, other):
        try:
            return self._enum == as_dtype(other)._enum
        except TypeError:
            return False

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return self._enum

    def __repr__(self):
        return "tf." + self._name

    def __str__(self):
        return "<dtype: %r>" % self._name


float32 = DType(1, "float32", np.float32)
float64 = DType(2, "float64", np.float64)
int32 = DType(3, "int32", np.int32)
uint8 = DType(4, "uint8", np.uint8)
int16 = DType(5, "int16", np.int16)
int8 = DType(6, "int8", np.int8)
string = DType(7, "string", object)
complex64 = DType(8, "complex64", np.complex64)
int64 = DType(9, "int64", np.int64)
bool = DType(10, "bool", np.bool_)  # noqa: A001 (TF's name)
uint16 = DType(17, "uint16", np.uint16)
complex128 = DType(18, "complex128", np.complex128)
resource = DType(20, "resource", object)
float = float32  # noqa: A001
double = float64

_BY_ENUM = {d.as_datatype_enum: d for d in (float32, float64, int32, uint8, int16, int8, string,
                                             complex64, int64, bool, uint16, complex128,
                                             resource)}
_BY_NAME = {d.name: d for d in _BY_ENUM.values()}
_BY_NAME.update({"float": float32, "double": float64})
_BY_NUMPY = {np.dtype(d.as_numpy_dtype): d for d in _BY_ENUM.values() if d is not resource}


def as_dtype(type_value):
    """A DType from a DType, an enum, a name ("float32"), or a numpy type."""
    if isinstance(type_value, DType):
        return type_value
    if type_value is None:
        raise TypeError("Cannot convert value None to a TensorFlow DType.")
    if isinstance(type_value, int) and not isinstance(type_value, type(True)):
        if type_value in _BY_ENUM:
            return _BY_ENUM[type_value]
    elif isinstance(type_value, str):
        if type_value in _BY_NAME:
            return _BY_NAME[type_value]
    else:
        try:
            np_type = np.dtype(type_value)
        except TypeError:
            np_type = None
        if np_type is not None:
            if np_type.kind in "SU":
                return string
            if np_type in _BY_NUMPY:
                return _BY_NUMPY[np_type]
    raise TypeError("Cannot convert value %r to a TensorFlow DType." % (type_value,))

