"""TF 1.x's optimizers over tensorweave/train/optimizer.h: the update ops and the slot
variables (accumulators, moments) are built by the C++ optimizer beside each variable, and
become Operations and Variables here.

Gradients come from `tf.gradients` (the C++ gradients driver); IndexedSlices gradients
(through `gather`) become sparse updates of only the rows they touch."""

from tensorweave import _native
from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.ops import gradients as gradients_lib
from tensorweave.ops import variables as variables_lib

def _variable_spec(var):
    return (var.op.name, var.dtype.as_datatype_enum, [int(d) for d in var.shape.as_list()])


def _gradient_spec(grad):
    if grad is None:
        return None
    if isinstance(grad, IndexedSlices):
        if grad.dense_shape is None:
            raise ValueError("IndexedSlices gradient has no dense_shape: %s" % (grad,))
        return ("sparse", grad.indices._native_ref, grad.values._native_ref,
                grad.dense_shape._native_ref)
    return ("dense", convert_to_tensor(grad)._native_ref)


def _number(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("%s must be a Python number here, got %r: tensors as hyper-parameters "
                        "other than the learning rate are not supported (docs/python.md)"
                        % (name, value))
    return float(value)


def _learning_rate(value):
    """A Python number, or (as TF takes) a scalar tensor, a variable, or a callable that
    returns one when the updates are built (a rate decayed with the global step)."""
    if callable(value) or isinstance(value, ops.Tensor) or hasattr(value, "_as_graph_element"):
        return value
    return _number("learning_rate", value)


class Optimizer:
    """The base of the optimizers. Subclasses give the C++ optimizer's kind, parameters
    and slot names (C++ suffix -> TF's slot name)."""

    GATE_NONE, GATE_OP, GATE_GRAPH = 0, 1, 2
    _kind = None
    _slot_names = {}

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._native = None
        self._slots = {}       # slot name -> {variable op name: Variable}
        self._non_slots = []   # optimizer variables not tied to one variable (Adam's powers)

    def get_name(self):
        return self._name

    def _native_optimizer(self):
        """The C++ optimizer, made at the first use; it keeps the slots between calls."""
        if self._native is None:
            params = self._params()
            if not isinstance(params["learning_rate"], float):
                params["learning_rate"] = 0.0  # a tensor: set at each apply_gradients
            self._native = _native.Optimizer(self._kind, params, bool(self._use_locking))
        return self._native

    def _learning_rate_tensor(self):
        """The learning rate as a tensor when it is not a number (TF's _prepare)."""
        value = self._params()["learning_rate"]
        if isinstance(value, float):
            return None
        if callable(value) and not hasattr(value, "_as_graph_element"):
            value = value()
        return convert_to_tensor(value, name="learning_rate")

    def _params(self):
        raise NotImplementedError

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        if callable(loss):
            raise NotImplementedError("compute_gradients: a callable loss is eager-mode only")
        if var_list is None:
            var_list = (variables_lib.trainable_variables() +
                        ops.get_collection(ops.GraphKeys.TRAINABLE_RESOURCE_VARIABLES))
        else:
            var_list = list(var_list)
        var_list = [v for v in var_list if v is not None]
        if not var_list:
            raise ValueError("No variables to optimize.")
        loss = convert_to_tensor(loss)
        if not loss.dtype.is_floating:
            raise ValueError("Invalid type %s for %s, expected: [float32, float64]." %
                             (loss.dtype.name, loss.name))
        grads = gradients_lib.gradients(loss, var_list,
                                        grad_ys=None if grad_loss is None else [grad_loss])
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        for g, v in grads_and_vars:
            if not isinstance(v, variables_lib.Variable):
                raise TypeError("Variable must be a tf.Variable, got %r" % (v,))
        if all(g is None for g, _ in grads_and_vars):
            raise ValueError("No gradients provided for any variable: %s." %
                             ([str(v) for _, v in grads_and_vars],))
        graph = grads_and_vars[0][1].graph
        step = None
        if global_step is not None:
            if not isinstance(global_step, variables_lib.Variable):
                raise TypeError("global_step must be a tf.Variable, got %r" % (global_step,))
            step = _variable_spec(global_step)
        with graph.name_scope(None), graph.name_scope(name or self._name):
            learning_rate = self._learning_rate_tensor()
        with graph.name_scope(None), graph._native_building(name or self._name) as device:
            if learning_rate is not None:
                self._native_optimizer().set_learning_rate(graph._native,
                                                           learning_rate._native_ref)
            op_name, made = self._native_optimizer().apply_gradients(
                graph._native, [_gradient_spec(g) for g, _ in grads_and_vars],
                [_variable_spec(v) for _, v in grads_and_vars], step, device)
        self._adopt_slots(graph, made, [v for _, v in grads_and_vars])
        return graph.get_operation_by_name(op_name)

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None):
        grads_and_vars = self.compute_gradients(loss, var_list=var_list, grad_loss=grad_loss)
        if all(g is None for g, _ in grads_and_vars):
            raise ValueError("No gradients provided for any variable, check your graph for ops "
                             "that do not support gradients, between variables %s and loss %s."
                             % ([str(v) for _, v in grads_and_vars], loss))
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    # ---- slots ----
    def _adopt_slots(self, graph, made, var_list):
        """The variables the C++ optimizer made, as Variables here: slots (by the slot name
        it asked for, whatever unique node name the graph gave them, as a second optimizer
        of one kind gets "w/Adam_2") and the others (Adam's beta powers)."""
        by_op = {v.op.name: v for v in var_list}
        for _save_name, handle, initializer, slot_of, slot_name, dtype, shape in made:
            variable = variables_lib.Variable._from_native(
                graph.get_operation_by_name(handle), graph.get_operation_by_name(initializer),
                dtypes.as_dtype(dtype), shape)
            if slot_of in by_op and slot_name in self._slot_names:
                self._slots.setdefault(self._slot_names[slot_name], {})[slot_of] = variable
            else:
                self._non_slots.append(variable)

    def get_slot_names(self):
        return sorted(self._slots)

    def get_slot(self, var, name):
        return self._slots.get(name, {}).get(var.op.name)

    def variables(self):
        out = list(self._non_slots)
        for slots in self._slots.values():
            out.extend(slots.values())
        return sorted(out, key=lambda v: v.name)


class GradientDescentOptimizer(Optimizer):
    _kind = "GradientDescent"

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = _learning_rate(learning_rate)

    def _params(self):
        return {"learning_rate": self._learning_rate}


class MomentumOptimizer(Optimizer):
    _kind = "Momentum"
    _slot_names = {"Momentum": "momentum"}

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate = _learning_rate(learning_rate)
        self._momentum = _number("momentum", momentum)
        self._use_nesterov = bool(use_nesterov)

    def _params(self):
        return {"learning_rate": self._learning_rate, "momentum": self._momentum,
                "use_nesterov": float(self._use_nesterov)}


class AdagradOptimizer(Optimizer):
    _kind = "Adagrad"
    _slot_names = {"Adagrad": "accumulator"}

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: %s" %
                             initial_accumulator_value)
        super().__init__(use_locking, name)
        self._learning_rate = _learning_rate(learning_rate)
        self._initial = _number("initial_accumulator_value", initial_accumulator_value)

    def _params(self):
        return {"learning_rate": self._learning_rate, "initial_accumulator_value": self._initial}


class AdamOptimizer(Optimizer):
    _kind = "Adam"
    _slot_names = {"Adam": "m", "Adam_1": "v"}

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08,
                 use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._hyper = {"learning_rate": _learning_rate(learning_rate),
                       "beta1": _number("beta1", beta1), "beta2": _number("beta2", beta2),
                       "epsilon": _number("epsilon", epsilon)}

    def _params(self):
        return dict(self._hyper)


class FtrlOptimizer(Optimizer):
    """FTRL-Proximal (the linear estimators' default), TF's arguments and checks."""
    _kind = "Ftrl"
    _slot_names = {"Ftrl": "accum", "Ftrl_1": "linear"}

    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="Ftrl", accum_name=None, linear_name=None,
                 l2_shrinkage_regularization_strength=0.0):
        if initial_accumulator_value < 0.0:
            raise ValueError("initial_accumulator_value %f needs to be positive or zero" %
                             initial_accumulator_value)
        if learning_rate_power > 0.0:
            raise ValueError("learning_rate_power %f needs to be negative or zero" %
                             learning_rate_power)
        if l1_regularization_strength < 0.0:
            raise ValueError("l1_regularization_strength %f needs to be positive or zero" %
                             l1_regularization_strength)
        if l2_regularization_strength < 0.0:
            raise ValueError("l2_regularization_strength %f needs to be positive or zero" %
                             l2_regularization_strength)
        if l2_shrinkage_regularization_strength < 0.0:
            raise ValueError("l2_shrinkage_regularization_strength %f needs to be positive or "
                             "zero" % l2_shrinkage_regularization_strength)
        if accum_name is not None or linear_name is not None:
            raise NotImplementedError("FtrlOptimizer: accum_name and linear_name are not "
                                      "supported (the slots are <var>/Ftrl and <var>/Ftrl_1, "
                                      "TF's defaults)")
        super().__init__(use_locking, name)
        self._hyper = {
            "learning_rate": _learning_rate(learning_rate),
            "learning_rate_power": _number("learning_rate_power", learning_rate_power),
            "initial_accumulator_value": _number("initial_accumulator_value",
                                                 initial_accumulator_value),
            "l1_regularization_strength": _number("l1_regularization_strength",
                                                  l1_regularization_strength),
            "l2_regularization_strength": _number("l2_regularization_strength",
                                                  l2_regularization_strength),
            "l2_shrinkage_regularization_strength": _number(
                "l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength)}

    def _params(self):
        return dict(self._hyper)


class RMSPropOptimizer(Optimizer):
    _kind = "RMSProp"
    _slot_names = {"RMSProp": "rms", "RMSProp_1": "momentum"}

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking=False, centered=False, name="RMSProp"):
        if centered:
            raise NotImplementedError("RMSPropOptimizer: centered=True is not supported")
        super().__init__(use_locking, name)
        self._hyper = {"learning_rate": _learning_rate(learning_rate),
                       "decay": _number("decay", decay),
                       "momentum": _number("momentum", momentum),
                       "epsilon": _number("epsilon", epsilon)}

    def _params(self):
        return dict(self._hyper)
