"""Every registered op as `raw_ops.<Name>(**inputs_and_attrs)`, generated from the op
registry: keyword arguments are the op's input and attribute names, type attributes are
inferred from the inputs, `name=` names the node. Returns the op's single output, a list
of its outputs, or the Operation when it has none."""

from tensorweave.framework import op_def_library as _lib


def _make(op_type):
    definition = _lib.OP_DEFS[op_type]

    def wrapper(name=None, **kwargs):
        return _lib.outputs_of(_lib.apply_op(op_type, name=name, **kwargs))

    wrapper.__name__ = op_type
    wrapper.__qualname__ = op_type
    args = ", ".join([a["name"] for a in definition["inputs"]] +
                     ["%s=%r" % (a["name"], a["default"]) if a["has_default"] else a["name"]
                      for a in definition["attrs"]])
    wrapper.__doc__ = "%s(%s, name=None)\n\n%s" % (op_type, args, definition["doc"])
    return wrapper


for _op_type in _lib.OP_DEFS:
    if not _op_type.startswith("_"):
        globals()[_op_type] = _make(_op_type)
del _op_type
