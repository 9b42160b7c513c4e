"""Graph, Operation and Tensor with TF 1.x's semantics, over the C++ graph builder.

Python decides what TF 1.x's Python layer decides: names (unique case-insensitively, in
name scopes), devices (the device stack: strings merged innermost first, functions,
None), control dependencies and colocation. Each node is then added by the C++ builder
(`_native.Graph.add_node`), which checks the op, its attributes and input types, infers
type attributes and places resource users with their resource; it refuses a bad node
without changing the graph, and the refusal is raised here as ValueError or TypeError.
"""

import contextlib
import re
import threading

from tensorweave import _native
from tensorweave.framework import dtypes as dtypes_lib
from tensorweave.framework import tensor_shape

_VALID_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\-/]*$")


class GraphKeys:
    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    MODEL_VARIABLES = "model_variables"
    GLOBAL_STEP = "global_step"
    QUEUE_RUNNERS = "queue_runners"
    SAVEABLE_OBJECTS = "saveable_objects"
    SUMMARIES = "summaries"
    SAVERS = "savers"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    TRAIN_OP = "train_op"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    LOCAL_RESOURCES = "local_resources"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    CONCATENATED_VARIABLES = "concatenated_variables"
    VARIABLES = GLOBAL_VARIABLES


class Tensor:
    """Output `value_index` of `op`. Hashable by identity (as in TF 1.x), so usable as a key."""

    __array_priority__ = 100

    def __init__(self, op, value_index, dtype):
        self._op = op
        self._value_index = value_index
        self._dtype = dtypes_lib.as_dtype(dtype)
        self._shape = tensor_shape.unknown_shape()

    @property
    def op(self):
        return self._op

    @property
    def _native_ref(self):
        """(node name, output index): how the native module names this tensor."""
        return (self._op.name, self._value_index)

    @property
    def value_index(self):
        return self._value_index

    @property
    def dtype(self):
        return self._dtype

    @property
    def graph(self):
        return self._op.graph

    @property
    def name(self):
        return "%s:%d" % (self._op.name, self._value_index)

    @property
    def device(self):
        return self._op.device

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    def set_shape(self, shape):
        shape = tensor_shape.as_shape(shape)
        if not self._shape.is_compatible_with(shape):
            raise ValueError("Shapes %s and %s are incompatible" % (self._shape, shape))
        self._shape = self._shape.merge_with(shape)

    def consumers(self):
        return [op for op in self.graph.get_operations() if self in op.inputs]

    def eval(self, feed_dict=None, session=None):
        return _run_with_default_session(self, feed_dict, session, "eval()")

    def __repr__(self):
        return "<tf.Tensor '%s' shape=%s dtype=%s>" % (self.name, self._shape, self._dtype.name)

    def __str__(self):
        return 'Tensor("%s", shape=%s, dtype=%s)' % (self.name, self._shape, self._dtype.name)

    def __bool__(self):
        raise TypeError("Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is "
                        "not None:` instead of `if t:` to test if a tensor is defined, and use "
                        "TensorFlow ops such as tf.cond to execute subgraphs conditioned on the "
                        "value of a tensor.")

    def __iter__(self):
        raise TypeError("Tensor objects are only iterable when eager execution is enabled. "
                        "To iterate over this tensor use tf.map_fn.")

    __hash__ = object.__hash__
    # Operators (+, -, <, [], ...) are added by tensorweave.ops.math_ops.


class Operation:
    """A node of a Graph."""

    def __init__(self, graph, name, op_type, inputs, control_inputs, attrs, device):
        self._graph = graph
        self._name = name
        self._type = op_type
        self._inputs = list(inputs)
        self._control_inputs = list(control_inputs)
        self._attrs = dict(attrs)
        self._device = device
        self._outputs = []
        self._colocation = []

    @property
    def name(self):
        return self._name

    @property
    def type(self):
        return self._type

    @property
    def graph(self):
        return self._graph

    @property
    def device(self):
        return self._device

    @property
    def inputs(self):
        return list(self._inputs)

    @property
    def outputs(self):
        return list(self._outputs)

    @property
    def control_inputs(self):
        return list(self._control_inputs)

    @property
    def node_def(self):
        return {"name": self._name, "op": self._type, "device": self._device,
                "input": [t.name for t in self._inputs] +
                         ["^" + c.name for c in self._control_inputs],
                "attr": dict(self._attrs)}

    def get_attr(self, name):
        if name in self._attrs:
            return self._attrs[name]
        raise ValueError("Operation %r has no attr named %r." % (self._name, name))

    def _set_device(self, device):
        self._device = device or ""

    def colocation_groups(self):
        return [b"loc:@" + (self._colocation[0] if self._colocation else self._name).encode()]

    def run(self, feed_dict=None, session=None):
        _run_with_default_session(self, feed_dict, session, "run()")

    def _default_session_error(self):
        return ("Cannot execute operation using `run()`: No default session is registered. "
                "Use `with sess.as_default():` or pass an explicit session to `run(session=sess)`")

    def __repr__(self):
        return "<tf.Operation '%s' type=%s>" % (self._name, self._type)

    __hash__ = object.__hash__


class _ThreadState(threading.local):
    def __init__(self):
        self.name_scope = ""
        self.devices = []          # strings, functions or None, outermost first
        self.control = []          # lists of Operations, or None (a reset)
        self.colocate = None       # the Operation new ops are colocated with
        self.ignore_devices = False


class Graph:
    """A dataflow graph. Ops added from several threads are serialized by a lock."""

    def __init__(self):
        self._native = _native.Graph()
        self._lock = threading.RLock()
        self._ops = {}
        self._ops_in_order = []
        self._names_in_use = {}   # lower-cased name -> next suffix
        self._collections = {}
        self._finalized = False
        self._state = _ThreadState()
        self._seed = None

    # ---- names ----
    def unique_name(self, name, mark_as_used=True):
        scope = self._state.name_scope
        if scope:
            name = scope + "/" + name
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base_key = key
            while key in self._names_in_use:
                key = "%s_%d" % (base_key, i)
                i += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = "%s_%d" % (name, i - 1)
        return name

    def get_name_scope(self):
        return self._state.name_scope

    @contextlib.contextmanager
    def name_scope(self, name):
        old = self._state.name_scope
        if not name:
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            if not _VALID_SCOPE_NAME.match(name) or (not old and not _VALID_NAME.match(name)):
                raise ValueError("'%s' is not a valid scope name" % name)
            new = self.unique_name(name)
        self._state.name_scope = new
        try:
            yield (new + "/") if new else ""
        finally:
            self._state.name_scope = old

    # ---- devices, control dependencies, colocation ----
    @contextlib.contextmanager
    def device(self, device_name_or_function):
        spec = device_name_or_function
        if spec is not None and not callable(spec):
            spec = _canonical_device(spec)
        self._state.devices.append(spec)
        try:
            yield
        finally:
            self._state.devices.pop()

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        if control_inputs is None:
            entry = None
        else:
            entry = []
            for c in control_inputs:
                if hasattr(c, "_as_graph_element") and not isinstance(c, (Tensor, Operation)):
                    c = c._as_graph_element()
                if isinstance(c, Tensor):
                    c = c.op
                if not isinstance(c, Operation):
                    raise TypeError("Control input must be Operation or Tensor: %s" % (c,))
                self.as_graph_element(c)  # ValueError for another graph's op
                entry.append(c)
        self._state.control.append(entry)
        try:
            yield
        finally:
            self._state.control.pop()

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing=False):
        if op is None and not ignore_existing:
            raise ValueError("Trying to reset colocation (op is None) but "
                             "ignore_existing is not True")
        if isinstance(op, Tensor):
            op = op.op
        elif op is not None and hasattr(op, "_as_graph_element"):
            element = op._as_graph_element()
            op = element.op if isinstance(element, Tensor) else element
        old = (self._state.colocate, self._state.ignore_devices)
        self._state.colocate = op
        self._state.ignore_devices = op is not None
        try:
            yield
        finally:
            self._state.colocate, self._state.ignore_devices = old

    def _device_for(self, op):
        device = ""
        if self._state.ignore_devices:
            return device
        for entry in reversed(self._state.devices):
            if entry is None:
                break
            if callable(entry):
                op._set_device(device)
                device = entry(op) or ""
                if not isinstance(device, str):
                    device = device.to_string()
                device = _canonical_device(device) if device else ""
            else:
                device = _native.merge_devices(entry, device)
        return device

    def _control_inputs_for(self, data_inputs):
        controls = []
        for entry in reversed(self._state.control):
            if entry is None:
                break
            controls[:0] = entry
        producers = {t.op for t in data_inputs}
        seen, result = set(), []
        for c in controls:
            if c not in producers and c not in seen:
                seen.add(c)
                result.append(c)
        return result

    # ---- ops ----
    def create_op(self, op_type, inputs, attrs=None, name=None, input_arity=None):
        """Adds an op. `inputs` is one Tensor or list of Tensors per op argument."""
        with self._lock:
            if self._finalized:
                raise RuntimeError("Graph is finalized and cannot be modified.")
            attrs = dict(attrs or {})
            if name is not None and name.endswith("/"):
                full = name[:-1]
                if full in self._ops:
                    raise ValueError("Duplicate node name in graph: '%s'" % full)
                # Marked as used (so a later op of that name is uniquified), but not counted
                # again when the name scope of the same name already did: TF's
                # `with name_scope("loss") as s: op(name=s)` leaves the next "loss" as
                # "loss_1", not "loss_2".
                self._names_in_use.setdefault(full.lower(), 1)
            else:
                full = self.unique_name(name or op_type)
            if not _VALID_NAME.match(full):
                raise ValueError("'%s' is not a valid node name" % full)
            flat = []
            for arg in inputs:
                for t in (arg if isinstance(arg, (list, tuple)) else [arg]):
                    if not isinstance(t, Tensor):
                        raise TypeError("Input of op %s is not a Tensor: %r" % (full, t))
                    if t.graph is not self:
                        raise ValueError("Tensor %s must be from the same graph as %s." % (
                            t.name, full))
                    flat.append(t)
            controls = self._control_inputs_for(flat)
            op = Operation(self, full, op_type, flat, controls, attrs, "")
            op._set_device(self._device_for(op))
            coloc = self._state.colocate
            native_inputs = [[(t.op.name, t.value_index) for t in
                              (arg if isinstance(arg, (list, tuple)) else [arg])]
                             for arg in inputs]
            try:
                types, device, shapes = self._native.add_node(
                    op_type, full, native_inputs, _native_attrs(attrs), op.device,
                    [c.name for c in controls], coloc.name if coloc is not None else "")
            except Exception as e:  # the builder refused the node: nothing was added
                raise _construction_error(e) from None
            op._set_device(device)
            if coloc is not None:
                op._colocation = [coloc.name]
            op._outputs = [Tensor(op, i, t) for i, t in enumerate(types)]
            for tensor, shape in zip(op._outputs, shapes):
                tensor._shape = tensor_shape.TensorShape(shape)
            self._ops[full] = op
            self._ops_in_order.append(op)
            return op

    @contextlib.contextmanager
    def _native_building(self, name, op_type="NoOp"):
        """For C++ code that adds nodes to this graph (gradients, optimizers, savers,
        lookups): holds the graph's lock, yields the device the current device scopes give
        a node `name` of `op_type`, and afterwards makes the nodes added Operations here,
        also those of a call that failed midway (C++ keeps them). RuntimeError on a
        finalized graph, as for ops added from Python."""
        with self._lock:
            if self._finalized:
                raise RuntimeError("Graph is finalized and cannot be modified.")
            probe = Operation(self, name, op_type, [], [], {}, "")
            # The ops C++ adds run after the enclosing control_dependencies, as ops added
            # here do (the variables it makes excepted, as TF's init_scope).
            controls = [c.name for c in self._control_inputs_for([])]
            self._native.set_building_control_dependencies(controls)
            try:
                yield self._device_for(probe)
            finally:
                self._native.set_building_control_dependencies([])
                self._import_native_nodes()

    def _import_native_nodes(self):
        """Makes the nodes C++ code added to the graph (gradients) Operations here, their
        names taken (and the scopes in them, as TF's one namespace of names and scopes)."""
        with self._lock:
            for node in self._native.import_nodes_since(len(self._ops_in_order)):
                inputs, controls = [], []
                for name in node["inputs"]:
                    if name.startswith("^"):
                        controls.append(self._ops[name[1:]])
                    else:
                        op_name, _, index = name.partition(":")
                        inputs.append(self._ops[op_name].outputs[int(index or 0)])
                op = Operation(self, node["name"], node["op"], inputs, controls, {},
                               node["device"])
                op._outputs = [Tensor(op, i, t) for i, t in enumerate(node["types"])]
                for tensor, shape in zip(op._outputs, node["shapes"]):
                    tensor._shape = tensor_shape.TensorShape(shape)
                parts = node["name"].split("/")
                for i in range(1, len(parts) + 1):
                    key = "/".join(parts[:i]).lower()
                    self._names_in_use[key] = max(self._names_in_use.get(key, 0), 1)
                self._ops[op.name] = op
                self._ops_in_order.append(op)

    def get_operations(self):
        with self._lock:
            return list(self._ops_in_order)

    def get_operation_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError("Operation names are strings (or similar), not %s." %
                            type(name).__name__)
        return self.as_graph_element(name, allow_tensor=False, allow_operation=True)

    def get_tensor_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError("Tensor names are strings (or similar), not %s." %
                            type(name).__name__)
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        if hasattr(obj, "_as_graph_element"):
            obj = obj._as_graph_element()
        if isinstance(obj, str):
            if ":" in obj:
                if not allow_tensor:
                    raise ValueError("Name %s appears to refer to a Tensor, not a Operation." %
                                     repr(obj))
                op_name, _, index = obj.rpartition(":")
                try:
                    index = int(index)
                except ValueError:
                    raise ValueError("The name %s looks a like a Tensor name, but is not a valid "
                                     "one. Tensor names must be of the form "
                                     "\"<op_name>:<output_index>\"." % repr(obj)) from None
                op = self._ops.get(op_name)
                if op is None:
                    raise KeyError("The name %s refers to a Tensor which does not exist. The "
                                   "operation, %s, does not exist in the graph." % (
                                       repr(obj), repr(op_name)))
                if index >= len(op.outputs):
                    raise KeyError("The name %s refers to a Tensor which does not exist. The "
                                   "operation, %s, exists but only has %d outputs." % (
                                       repr(obj), repr(op_name), len(op.outputs)))
                return op.outputs[index]
            op = self._ops.get(obj)
            if op is None:
                raise KeyError("The name %s refers to an Operation not in the graph." % repr(obj))
            if not allow_operation:
                raise ValueError("The name %s refers to an Operation, not a Tensor. Tensor names "
                                 "must be of the form \"<op_name>:<output_index>\"." % repr(obj))
            return op
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError("Tensor %s is not an element of this graph." % obj)
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError("Operation %s is not an element of this graph." % obj)
            return obj
        raise TypeError("Can not convert a %s into a %s." % (
            type(obj).__name__, "Tensor or Operation" if allow_tensor and allow_operation
            else ("Tensor" if allow_tensor else "Operation")))

    # ---- collections ----
    def add_to_collection(self, name, value):
        with self._lock:
            self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        for name in ([names] if isinstance(names, str) else set(names)):
            self.add_to_collection(name, value)

    def get_collection_ref(self, key):
        with self._lock:
            return self._collections.setdefault(key, [])

    def get_collection(self, key, scope=None):
        with self._lock:
            items = list(self._collections.get(key, []))
        if scope is None:
            return items
        pattern = re.compile(scope)
        return [i for i in items if hasattr(i, "name") and pattern.match(i.name)]

    def get_all_collection_keys(self):
        with self._lock:
            return [k for k, v in self._collections.items() if isinstance(k, str)]

    def clear_collection(self, name):
        with self._lock:
            self._collections.pop(name, None)

    # ---- the rest ----
    def finalize(self):
        self._finalized = True

    def _unsafe_unfinalize(self):
        """Makes a finalized graph editable again (TF's, for MonitoredSession's close)."""
        self._finalized = False

    @property
    def finalized(self):
        return self._finalized

    @property
    def seed(self):
        return self._seed

    @seed.setter
    def seed(self, value):
        self._seed = value

    def as_graph_def(self, from_version=None, add_shapes=False):
        """The graph as a GraphDef protocol buffer (tensorweave's GraphDef)."""
        from tensorweave.protobuf import graph_pb2
        graph_def = graph_pb2.GraphDef()
        graph_def.ParseFromString(self._native.graph_def())
        return graph_def

    def as_default(self):
        return _default_graph_stack.get_controller(self)

    @property
    def version(self):
        return len(self._ops_in_order)


def _canonical_device(spec):
    if hasattr(spec, "to_string"):
        spec = spec.to_string()
    if not isinstance(spec, str):
        raise TypeError("A device must be a string, a DeviceSpec, a function or None, not %r" %
                        (spec,))
    if not spec:
        return ""
    try:
        return _native.canonical_device(spec)
    except Exception as e:
        raise ValueError(str(e)) from None


def _native_attrs(attrs):
    out = {}
    for k, v in attrs.items():
        if isinstance(v, dtypes_lib.DType):
            v = v.as_datatype_enum
        elif isinstance(v, (list, tuple)) and v and isinstance(v[0], dtypes_lib.DType):
            v = [d.as_datatype_enum for d in v]
        elif isinstance(v, tensor_shape.TensorShape):
            v = None if v.dims is None else [d.value for d in v.dims]
        elif isinstance(v, (list, tuple)) and v and isinstance(v[0], tensor_shape.TensorShape):
            v = [None if s.dims is None else [d.value for d in s.dims] for s in v]
        out[k] = v
    return out


def _construction_error(error):
    """The builder's refusal as TF 1.x raises it at construction: TypeError for types."""
    message = str(error)
    if " must be " in message and ", got " in message or "does not match" in message:
        return TypeError(message)
    return ValueError(message)


# ---- the default graph ----
class _DefaultStack(threading.local):
    def __init__(self):
        self.stack = []

    def get_controller(self, graph):
        stack = self

        @contextlib.contextmanager
        def controller():
            stack.stack.append(graph)
            try:
                yield graph
            finally:
                stack.stack.pop()

        return controller()


_default_graph_stack = _DefaultStack()
_global_default_graph = None


def _graph_of(values):
    """The graph of the first tensor (or variable) among `values` and their lists, else
    the default graph: ops are built in their inputs' graph, as in TF."""
    default = get_default_graph()
    for value in values:
        for item in (value if isinstance(value, (list, tuple)) else [value]):
            if hasattr(item, "_as_graph_element") and not isinstance(item, Tensor):
                item = item._as_graph_element()
            if isinstance(item, Tensor):
                # A function being traced captures the tensors of the graphs around it.
                if item.graph is not default and getattr(default, "captures_from", None) \
                        and default.captures_from(item.graph):
                    return default
                return item.graph
    return default


def inputs_graph(*values):
    """A context in which `values`' graph is the default (see _graph_of)."""
    graph = _graph_of(values)
    if graph is get_default_graph():
        return contextlib.nullcontext(graph)
    return graph.as_default()


def get_default_graph():
    global _global_default_graph
    if _default_graph_stack.stack:
        return _default_graph_stack.stack[-1]
    if _global_default_graph is None:
        _global_default_graph = Graph()
    return _global_default_graph


def reset_default_graph():
    global _global_default_graph
    if _default_graph_stack.stack:
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. If "
                             "you need a cleared graph, exit the nesting and create a new graph.")
    _global_default_graph = Graph()


# ---- the default session (set by client/session.py) ----
class _DefaultSessionStack(threading.local):
    def __init__(self):
        self.stack = []


_default_session_stack = _DefaultSessionStack()


def get_default_session():
    return _default_session_stack.stack[-1] if _default_session_stack.stack else None


def _run_with_default_session(fetch, feed_dict, session, what):
    if session is None:
        session = get_default_session()
        if session is None:
            if isinstance(fetch, Operation):
                raise ValueError(fetch._default_session_error())
            raise ValueError("Cannot evaluate tensor using `%s`: No default session is "
                             "registered. Use `with sess.as_default()` or pass an explicit "
                             "session to `%s`" % (what, what))
    if session.graph is not fetch.graph:
        raise ValueError("Cannot use the given session to evaluate tensor: the tensor's graph "
                         "is different from the session's graph.")
    return session.run(fetch, feed_dict)


# ---- module-level conveniences with TF's names ----
def name_scope(name, default_name=None, values=None):
    if name is None:
        name = default_name
    graph = get_default_graph()
    if values:
        for v in values:
            if isinstance(v, Tensor):
                graph = v.graph
                break
    return graph.name_scope(name)


def device(device_name_or_function):
    return get_default_graph().device(device_name_or_function)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def colocate_with(op, ignore_existing=False):
    return get_default_graph().colocate_with(op, ignore_existing)


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)
