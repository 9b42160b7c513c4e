"""Element-wise math beyond math_ops: tf.floor, ceil, round, sign, reciprocal, rsqrt, erf,
cos, sin (the ops of src/ops/cwise_math_ops.cc)."""

from tensorweave import raw_ops
from tensorweave.framework.constant_op import convert_to_tensor


def _unary(op_type, default_name):
    def fn(x, name=None):
        return getattr(raw_ops, op_type)(x=x, name=name or default_name)
    fn.__name__ = default_name.lower()
    return fn


floor = _unary("Floor", "Floor")
ceil = _unary("Ceil", "Ceil")
sign = _unary("Sign", "Sign")
reciprocal = _unary("Reciprocal", "Reciprocal")
rsqrt = _unary("Rsqrt", "Rsqrt")
erf = _unary("Erf", "Erf")
cos = _unary("Cos", "Cos")
sin = _unary("Sin", "Sin")


def round(x, name=None):  # noqa: A001 (TF's name)
    """Halves to even (0.5 -> 0, 1.5 -> 2), as TF's Round; integers are returned as they are."""
    x = convert_to_tensor(x, name="x")
    if x.dtype.is_integer:
        return x
    return raw_ops.Round(x=x, name=name or "Round")
