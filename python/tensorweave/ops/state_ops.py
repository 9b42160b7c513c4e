"""TF 1.x's sparse variable updates: tf.scatter_update, scatter_add, scatter_sub,
scatter_mul, scatter_div, scatter_max, scatter_min over the C++ Scatter* ops
(src/ops/state_ops.cc). Each updates the rows `indices` of the variable where it lives
(a ps task's variable is updated on that task) and returns its new value."""

from tensorweave import raw_ops
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import variables


def _scatter(op_type, default_locking):
    def scatter(ref, indices, updates, use_locking=default_locking, name=None):
        if not isinstance(ref, variables.Variable):
            raise TypeError("%s needs a Variable, got %r" % (op_type, ref))
        return getattr(raw_ops, op_type)(
            resource=ref.handle, indices=convert_to_tensor(indices),
            updates=convert_to_tensor(updates, dtype=ref.dtype), use_locking=bool(use_locking),
            name=name or op_type)
    scatter.__name__ = "scatter_" + op_type[len("Scatter"):].lower()
    scatter.__doc__ = "The variable's rows at `indices` updated by %s with `updates`." % op_type
    return scatter


scatter_update = _scatter("ScatterUpdate", True)
scatter_add = _scatter("ScatterAdd", False)
scatter_sub = _scatter("ScatterSub", False)
scatter_mul = _scatter("ScatterMul", False)
scatter_div = _scatter("ScatterDiv", False)
scatter_max = _scatter("ScatterMax", False)
scatter_min = _scatter("ScatterMin", False)
