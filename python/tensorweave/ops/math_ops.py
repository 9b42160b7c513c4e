"""Math and reduction ops with TF 1.x's names, and the Tensor operators.

Operators follow TF 1.x: a Python operand takes the tensor's dtype, `/` is true division
(integers are cast to floating point first), `//` and `%` floor, `==` and `!=` stay
identity comparisons (tf.equal compares values).
"""

from tensorweave import raw_ops
from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor


def _binary(op_type, default_name):
    def fn(x, y, name=None):
        with ops.inputs_graph(x, y):
            return _build(x, y, name)

    def _build(x, y, name):
        x_is_tensor = isinstance(x, ops.Tensor) or hasattr(x, "_as_graph_element")
        if x_is_tensor:
            x = convert_to_tensor(x)
            y = convert_to_tensor(y, dtype=None if _is_tensor(y) else x.dtype)
        else:
            y = convert_to_tensor(y)
            x = convert_to_tensor(x, dtype=y.dtype)
        if x.dtype != y.dtype:
            raise TypeError("Input 'y' of '%s' Op has type %s that does not match type %s of "
                            "argument 'x'." % (op_type, y.dtype.name, x.dtype.name))
        return getattr(raw_ops, op_type)(x=x, y=y, name=name or default_name)
    fn.__name__ = default_name
    return fn


def _unary(op_type):
    def fn(x, name=None):
        return getattr(raw_ops, op_type)(x=x, name=name or op_type)
    fn.__name__ = op_type.lower()
    return fn


def _is_tensor(v):
    return isinstance(v, ops.Tensor) or hasattr(v, "_as_graph_element")


add = _binary("Add", "add")
subtract = _binary("Sub", "sub")
multiply = _binary("Mul", "mul")
maximum = _binary("Maximum", "maximum")
minimum = _binary("Minimum", "minimum")
equal = _binary("Equal", "equal")
not_equal = _binary("NotEqual", "not_equal")
less = _binary("Less", "less")
less_equal = _binary("LessEqual", "less_equal")
greater = _binary("Greater", "greater")
greater_equal = _binary("GreaterEqual", "greater_equal")
floordiv = _binary("FloorDiv", "floordiv")
floormod = _binary("FloorMod", "mod")
mod = floormod
pow = _binary("Pow", "pow")  # noqa: A001 (TF's name)
logical_and = _binary("LogicalAnd", "LogicalAnd")
logical_or = _binary("LogicalOr", "LogicalOr")


logical_not = _unary("LogicalNot")


def logical_xor(x, y, name="LogicalXor"):
    with ops.name_scope(name):
        return logical_and(logical_or(x, y), logical_not(logical_and(x, y)))


abs = _unary("Abs")  # noqa: A001 (TF's name)
sub = subtract
mul = multiply


def truediv(x, y, name=None):
    with ops.inputs_graph(x, y):
        return _truediv(x, y, name)


def _truediv(x, y, name):
    x = convert_to_tensor(x) if _is_tensor(x) else x
    if _is_tensor(x):
        y = convert_to_tensor(y, dtype=None if _is_tensor(y) else x.dtype)
    else:
        y = convert_to_tensor(y)
        x = convert_to_tensor(x, dtype=y.dtype)
    if x.dtype != y.dtype:
        raise TypeError("x and y must have the same dtype, got %r != %r" % (x.dtype, y.dtype))
    if x.dtype in (dtypes.int32, dtypes.int64, dtypes.uint8):
        target = dtypes.float64 if x.dtype in (dtypes.int32, dtypes.int64) else dtypes.float32
        x, y = cast(x, target), cast(y, target)
    return raw_ops.Div(x=x, y=y, name=name or "truediv")


def divide(x, y, name=None):
    return truediv(x, y, name=name or "truediv")


div = divide


negative = _unary("Neg")
exp = _unary("Exp")
log = _unary("Log")
sqrt = _unary("Sqrt")
square = _unary("Square")
sigmoid = _unary("Sigmoid")
tanh = _unary("Tanh")


def cast(x, dtype, name=None):
    x = convert_to_tensor(x)
    dtype = dtypes.as_dtype(dtype)
    if x.dtype == dtype:
        return x
    return raw_ops.Cast(x=x, DstT=dtype, name=name or "Cast")


def to_float(x, name="ToFloat"):
    return cast(x, dtypes.float32, name=name)


def to_int32(x, name="ToInt32"):
    return cast(x, dtypes.int32, name=name)


def to_int64(x, name="ToInt64"):
    return cast(x, dtypes.int64, name=name)


def add_n(inputs, name=None):
    return raw_ops.AddN(inputs=list(inputs), name=name or "AddN")


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    return raw_ops.MatMul(a=a, b=b, transpose_a=transpose_a, transpose_b=transpose_b,
                          name=name or "MatMul")


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """TF's composition (ops/clip_ops.py): max(min(t, max), min)."""
    from tensorweave.ops import clip_ops
    return clip_ops.clip_by_value(t, clip_value_min, clip_value_max, name=name)


def _reduction(op_type, default_name):
    def fn(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
           keep_dims=None):
        x = convert_to_tensor(input_tensor)
        if axis is None:
            axis = reduction_indices
        keep = bool(keepdims if keepdims is not None else keep_dims)
        if axis is None:
            if x.shape.ndims is None:
                if keep:
                    raise NotImplementedError("%s with keepdims over every axis of a tensor "
                                              "of unknown rank: give axis" % default_name)
                # Every axis of any rank: the flattened tensor's only axis.
                x = raw_ops.Reshape(tensor=x, shape=[-1])
                axis = [0]
            else:
                axis = list(range(x.shape.ndims))
        return getattr(raw_ops, op_type)(input=x, axis=axis, keep_dims=keep,
                                         name=name or default_name)
    fn.__name__ = default_name
    return fn


reduce_sum = _reduction("Sum", "Sum")
reduce_mean = _reduction("Mean", "Mean")
reduce_max = _reduction("Max", "Max")
reduce_min = _reduction("Min", "Min")
reduce_prod = _reduction("Prod", "Prod")
reduce_all = _reduction("All", "All")
reduce_any = _reduction("Any", "Any")


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                     keep_dims=None):
    """log(sum(exp(x))) over the axes, as TF computes it: the largest finite entry is taken
    out before exp (no overflow) and added back, its gradient stopped."""
    from tensorweave.ops import array_ops
    keep = bool(keepdims if keepdims is not None else keep_dims)
    if axis is None:
        axis = reduction_indices
    with ops.name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor)
        raw_max = reduce_max(x, axis, keepdims=True)
        finite = less(abs(raw_max), float("inf"))
        my_max = array_ops.stop_gradient(
            array_ops.where(finite, raw_max, array_ops.zeros_like(raw_max)))
        result = log(reduce_sum(exp(subtract(x, my_max)), axis, keepdims=keep))
        if not keep:
            my_max = array_ops.reshape(my_max, array_ops.shape(result))
        return add(result, my_max, name=scope)


def count_nonzero(input_tensor, axis=None, keepdims=None, dtype=dtypes.int64, name=None,
                  reduction_indices=None, keep_dims=None):
    """The number of entries that are not zero (not False, for bools) over the axes."""
    with ops.name_scope(name, "count_nonzero", [input_tensor]):
        x = convert_to_tensor(input_tensor)
        zero = convert_to_tensor(False if x.dtype == dtypes.bool else 0, dtype=x.dtype)
        nonzero = cast(not_equal(x, zero), dtypes.int64)
        counts = reduce_sum(nonzero, axis, keepdims=keepdims,
                            reduction_indices=reduction_indices, keep_dims=keep_dims)
        return cast(counts, dtype)


def argmax(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    if axis is None:
        axis = dimension if dimension is not None else 0
    return raw_ops.ArgMax(input=input, dimension=axis, output_type=output_type,
                          name=name or "ArgMax")


def argmin(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    if axis is None:
        axis = dimension if dimension is not None else 0
    return raw_ops.ArgMin(input=input, dimension=axis, output_type=output_type,
                          name=name or "ArgMin")


# ---- Tensor operators ----
def _reflect(fn):
    return lambda x, y: fn(y, x)


def _getitem(tensor, key):
    from tensorweave.ops import array_ops
    return array_ops._slice_helper(tensor, key)


def _install_operators(cls):
    cls.__add__ = lambda x, y: add(x, y)
    cls.__radd__ = _reflect(add)
    cls.__sub__ = lambda x, y: subtract(x, y)
    cls.__rsub__ = _reflect(subtract)
    cls.__mul__ = lambda x, y: multiply(x, y)
    cls.__rmul__ = _reflect(multiply)
    cls.__truediv__ = lambda x, y: truediv(x, y)
    cls.__rtruediv__ = _reflect(truediv)
    cls.__matmul__ = lambda x, y: matmul(x, y)
    cls.__rmatmul__ = _reflect(matmul)
    cls.__neg__ = lambda x: negative(x)
    cls.__lt__ = lambda x, y: less(x, y)
    cls.__gt__ = lambda x, y: greater(x, y)
    cls.__getitem__ = _getitem
    cls.__floordiv__ = lambda x, y: floordiv(x, y)
    cls.__rfloordiv__ = _reflect(floordiv)
    cls.__mod__ = lambda x, y: floormod(x, y)
    cls.__rmod__ = _reflect(floormod)
    cls.__pow__ = lambda x, y: pow(x, y)
    cls.__rpow__ = _reflect(pow)
    cls.__le__ = lambda x, y: less_equal(x, y)
    cls.__ge__ = lambda x, y: greater_equal(x, y)
    cls.__abs__ = lambda x: abs(x)
    cls.__and__ = lambda x, y: logical_and(x, y)
    cls.__rand__ = _reflect(logical_and)
    cls.__or__ = lambda x, y: logical_or(x, y)
    cls.__ror__ = _reflect(logical_or)
    cls.__xor__ = lambda x, y: logical_xor(x, y)
    cls.__rxor__ = _reflect(logical_xor)
    cls.__invert__ = lambda x: logical_not(x)


_install_operators(ops.Tensor)
