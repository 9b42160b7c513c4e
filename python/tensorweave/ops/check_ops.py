"""Checks and logging with TF 1.x's names: tf.check_numerics, tf.Assert, tf.Print, tf.print
and the tf.debugging asserts (assert_equal, assert_less, ...), composed from Assert as TF
composes them. The ops are C++ (src/ops/check_ops.cc); a failed check is the step's
InvalidArgumentError ("assertion failed: [...] [...]")."""

import sys

import numpy as np

from tensorweave import raw_ops
from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor


def check_numerics(tensor, message, name=None):
    return raw_ops.CheckNumerics(tensor=convert_to_tensor(tensor), message=message,
                                 name=name or "CheckNumerics")


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 (TF's name)
    """An op that fails the step with InvalidArgumentError "assertion failed: [d0] [d1] ..."
    when `condition` (a bool scalar) is false; run it, or make it a control dependency."""
    with ops.name_scope(name, "Assert"):
        data = [convert_to_tensor(d) for d in data]
        return raw_ops.Assert(condition=convert_to_tensor(condition, dtype=dtypes.bool),
                              data=data, summarize=3 if summarize is None else summarize,
                              name="Assert")


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802
    """`input_`, passed through, after writing `message` and `data` to stderr."""
    return raw_ops.Print(input=convert_to_tensor(input_),
                         data=[convert_to_tensor(d) for d in data], message=message or "",
                         first_n=-1 if first_n is None else first_n,
                         summarize=3 if summarize is None else summarize,
                         name=name or "Print")


def print_v2(*inputs, **kwargs):
    """tf.print: an op writing `inputs` (tensors and Python values) separated by `sep` and
    followed by `end` to stderr (or sys.stdout) when run. Tensors print as TF 1.x's Print
    shows them ("[1 2 3]"), Python values as str()."""
    output_stream = kwargs.pop("output_stream", sys.stderr)
    summarize = kwargs.pop("summarize", 3)
    sep = kwargs.pop("sep", " ")
    end = kwargs.pop("end", "\n")
    name = kwargs.pop("name", None)
    if kwargs:
        raise ValueError("Unrecognized keyword arguments for tf.print: %s" % sorted(kwargs))
    if output_stream not in (sys.stderr, sys.stdout):
        raise ValueError("tf.print: output_stream must be sys.stderr or sys.stdout")
    pieces, tensors = [], []
    for x in inputs:
        if isinstance(x, (ops.Tensor, np.ndarray)) or hasattr(x, "_as_graph_element"):
            tensors.append(convert_to_tensor(x))
            pieces.append(None)
        else:
            pieces.append(str(x))
    # A placeholder that no Python value's text contains (as TF picks one).
    placeholder, n = "{}", 0
    while any(p is not None and placeholder in p for p in pieces):
        n += 1
        placeholder = "{%d}" % n
    template = sep.join(placeholder if p is None else p for p in pieces)
    with ops.name_scope(name, "PrintV2"):
        text = raw_ops.StringFormat(inputs=tensors, template=template, placeholder=placeholder,
                                    summarize=summarize, name="StringFormat")
        return raw_ops.PrintV2(input=text, end=end, name="PrintV2",
                               output_stream="stdout" if output_stream is sys.stdout
                               else "stderr")


def _all(condition):
    from tensorweave.ops import math_ops
    # Every element true (true when empty): no element false.
    false = math_ops.cast(math_ops.logical_not(condition), dtypes.int32)
    return math_ops.equal(math_ops.reduce_sum(false), 0)


def _constant_value(t):
    """The value of a Const tensor (numpy), else None."""
    return t.op.get_attr("value") if isinstance(t, ops.Tensor) and t.op.type == "Const" else None


def _assert_static(data):
    """As TF's assert_equal on two constants that differ: InvalidArgumentError now, its
    message the data (constants by value), one a line."""
    from tensorweave import errors
    lines = []
    for d in data:
        value = _constant_value(d) if isinstance(d, ops.Tensor) else d
        lines.append(str(value if value is not None else d))
    raise errors.InvalidArgumentError(None, None, "\n".join(lines))


def _binary_assert(symbol, compare, default_name, static_compare=None):
    def assert_fn(x, y, data=None, summarize=None, message=None, name=None):
        with ops.name_scope(name, default_name):
            x = convert_to_tensor(x, name="x")
            y = convert_to_tensor(y, name="y", dtype=x.dtype)
            if data is None:
                data = [message or "",
                        "Condition x %s y did not hold element-wise:" % symbol,
                        "x (%s) = " % x.name, x, "y (%s) = " % y.name, y]
            x_static, y_static = _constant_value(x), _constant_value(y)
            if static_compare is not None and x_static is not None and y_static is not None:
                if not np.all(static_compare(x_static, y_static)):
                    _assert_static(data)
            return Assert(_all(compare(x, y)), data, summarize=summarize)
    assert_fn.__name__ = default_name
    return assert_fn


def _math(fn_name):
    def call(x, y):
        from tensorweave.ops import math_ops
        return getattr(math_ops, fn_name)(x, y)
    return call


# Only assert_equal checks two constants at once, as TF 1.15's.
assert_equal = _binary_assert("==", _math("equal"), "assert_equal", np.equal)
assert_none_equal = _binary_assert("!=", _math("not_equal"), "assert_none_equal")
assert_less = _binary_assert("<", _math("less"), "assert_less")
assert_less_equal = _binary_assert("<=", _math("less_equal"), "assert_less_equal")
assert_greater = _binary_assert(">", _math("greater"), "assert_greater")
assert_greater_equal = _binary_assert(">=", _math("greater_equal"), "assert_greater_equal")


def _sign_assert(symbol, compare_zero_to_x, default_name):
    def assert_fn(x, data=None, summarize=None, message=None, name=None):
        with ops.name_scope(name, default_name):
            x = convert_to_tensor(x, name="x")
            if data is None:
                data = [message or "", "Condition x %s 0 did not hold element-wise:" % symbol,
                        "x (%s) = " % x.name, x]
            zero = convert_to_tensor(0, dtype=x.dtype)
            return compare_zero_to_x(zero, x, data=data, summarize=summarize)
    assert_fn.__name__ = default_name
    return assert_fn


assert_positive = _sign_assert(">", assert_less, "assert_positive")
assert_non_negative = _sign_assert(">=", assert_less_equal, "assert_non_negative")
assert_negative = _sign_assert("<", assert_greater, "assert_negative")
assert_non_positive = _sign_assert("<=", assert_greater_equal, "assert_non_positive")


def assert_rank(x, rank, message=None, name=None):
    """ValueError now when x's static rank is known and differs; else an op that checks it
    when run (a no-op when the static rank matches)."""
    from tensorweave.ops import array_ops, control_flow_ops, math_ops
    with ops.name_scope(name, "assert_rank"):
        x = convert_to_tensor(x, name="x")
        if isinstance(rank, (int, np.integer)):
            static = x.shape.ndims
            if static is not None:
                if static != rank:
                    raise ValueError("%s.  Tensor %s must have rank %d.  Received rank %d, "
                                     "shape %s" % (message or "", x.name, rank, static, x.shape))
                return control_flow_ops.no_op(name="static_checks_determined_all_ok")
        rank = convert_to_tensor(rank, dtype=dtypes.int32, name="rank")
        actual = array_ops.size(array_ops.shape(x))
        data = [message or "", "Tensor %s must have rank" % x.name, rank,
                "Received shape: ", array_ops.shape(x)]
        return Assert(math_ops.equal(actual, rank), data)
