"""no_op, group and tuple."""

import builtins

from tensorweave import raw_ops
from tensorweave.framework import ops


def no_op(name=None):
    return raw_ops.NoOp(name=name or "NoOp")


def group(*inputs, **kwargs):
    """An op that runs after every one of `inputs` (ops or tensors)."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise ValueError("Unknown keyword arguments: " + ", ".join(kwargs.keys()))
    flat = []
    for i in inputs:
        flat.extend(i if isinstance(i, (list, builtins.tuple)) else [i])
    deps = []
    for i in flat:
        if hasattr(i, "_as_graph_element"):
            i = i._as_graph_element()
        deps.append(i.op if isinstance(i, ops.Tensor) else i)
    with ops.control_dependencies(deps):
        return no_op(name=name or "group_deps")


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001 (TF's name)
    """Tensors with the same values, available only once all of them are computed."""
    from tensorweave.ops import array_ops
    with ops.name_scope(name, "tuple") as scope:
        gate = group(*[t for t in tensors if t is not None] + list(control_inputs or []),
                     name=scope + "control_dependency" if scope else None)
        out = []
        with ops.control_dependencies([gate]):
            for t in tensors:
                out.append(None if t is None else array_ops.identity(t))
        return out
