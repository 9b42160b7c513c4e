"""Adds ops from their registered definitions: inputs converted to tensors, type
attributes inferred from them (the first tensor input of a type attribute sets it, and
Python values given for other inputs of that attribute are converted to it), the rest of
the keyword arguments taken as attributes."""

from tensorweave import _native
from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor

OP_DEFS = {d["name"]: d for d in _native.op_defs()}


def op_def(op_type):
    try:
        return OP_DEFS[op_type]
    except KeyError:
        raise ValueError("Op type not registered '%s'" % op_type) from None


def _is_list_arg(arg):
    return bool(arg["number_attr"] or arg["type_list_attr"])


def apply_op(op_type, name=None, **kwargs):
    """Adds an op of `op_type` to its inputs' graph (as TF does: not necessarily the default
    one); returns the Operation."""
    with ops.inputs_graph(*kwargs.values()):
        return _apply_op(op_type, name, kwargs)


def _apply_op(op_type, name, kwargs):
    definition = op_def(op_type)
    attr_kinds = {a["name"]: a["kind"] for a in definition["attrs"]}
    type_attrs = {}
    for key, value in kwargs.items():
        if attr_kinds.get(key) == "type" and value is not None:
            type_attrs[key] = dtypes.as_dtype(value)
    values = {}
    for arg in definition["inputs"]:
        if arg["name"] not in kwargs:
            raise TypeError("%s missing required argument '%s'" % (op_type, arg["name"]))
        values[arg["name"]] = kwargs.pop(arg["name"])
    # First the inputs that are tensors already: they decide the type attributes.
    for arg in definition["inputs"]:
        items = values[arg["name"]]
        items = list(items) if _is_list_arg(arg) and isinstance(items, (list, tuple)) else [items]
        for item in items:
            item = item._as_graph_element() if hasattr(item, "_as_graph_element") else item
            if isinstance(item, ops.Tensor) and arg["type_attr"]:
                type_attrs.setdefault(arg["type_attr"], item.dtype)
    inputs = []
    for arg in definition["inputs"]:
        value = values[arg["name"]]
        if _is_list_arg(arg):
            if not isinstance(value, (list, tuple)):
                raise TypeError("Expected list for '%s' argument to '%s' Op, not %r." %
                                (arg["name"], op_type, value))
            hint = type_attrs.get(arg["type_attr"]) if arg["type_attr"] else None
            converted = [_convert(v, hint, arg, op_type) for v in value]
            if arg["type_attr"] and converted:
                type_attrs.setdefault(arg["type_attr"], converted[0].dtype)
            inputs.append(converted)
        else:
            hint = (dtypes.as_dtype(arg["type"]) if arg["type"] else
                    type_attrs.get(arg["type_attr"]))
            tensor = _convert(value, hint, arg, op_type)
            if arg["type_attr"]:
                type_attrs.setdefault(arg["type_attr"], tensor.dtype)
            inputs.append(tensor)
    attrs = {}
    for key, value in kwargs.items():
        if key not in attr_kinds:
            raise TypeError("%s got an unexpected keyword argument '%s'" % (op_type, key))
        if value is not None:
            attrs[key] = value
    attrs.update(type_attrs)
    return ops.get_default_graph().create_op(op_type, inputs, attrs, name=name)


def _convert(value, hint, arg, op_type):
    if isinstance(value, ops.Tensor) or hasattr(value, "_as_graph_element"):
        tensor = convert_to_tensor(value)
        if hint is not None and arg["type"] and tensor.dtype != hint:
            raise TypeError("Input '%s' of '%s' Op has type %s that does not match expected "
                            "type of %s." % (arg["name"], op_type, tensor.dtype.name, hint.name))
        if hint is not None and arg["type_attr"] and tensor.dtype != hint:
            raise TypeError("Input '%s' of '%s' Op has type %s that does not match type %s of "
                            "argument '%s'." % (arg["name"], op_type, tensor.dtype.name,
                                                hint.name, arg["type_attr"]))
        return tensor
    return convert_to_tensor(value, dtype=hint)


def outputs_of(op):
    """What a generated wrapper returns: the op (no outputs), its tensor, or a list."""
    if not op.outputs:
        return op
    if len(op.outputs) == 1:
        return op.outputs[0]
    return op.outputs
