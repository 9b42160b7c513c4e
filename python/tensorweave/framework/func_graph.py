"""FuncGraph: the graph a function (a tf.data map or filter function) is traced into.
Tensors of the graphs around it that the function uses are captured: a constant is copied
in, anything else becomes a Placeholder fed, when the function runs, with the outer
tensor's value (an input of the op that runs the function)."""

from tensorweave.framework import ops


class FuncGraph(ops.Graph):
    def __init__(self, name, outer_graph):
        super().__init__()
        self.name = name
        self.outer_graph = outer_graph
        self.seed = outer_graph.seed  # random ops in the function follow the graph's seed
        self.captures = []  # (outer tensor, placeholder name), in the order first used
        self._captured = {}  # id(outer tensor) -> inner tensor

    def captures_from(self, graph):
        """True when tensors of `graph` may be captured here (it encloses this one)."""
        outer = self.outer_graph
        while outer is not None:
            if outer is graph:
                return True
            outer = getattr(outer, "outer_graph", None)
        return False

    def capture(self, tensor):
        if tensor.graph is self:
            return tensor
        if not self.captures_from(tensor.graph):
            raise ValueError("Tensor %s must be from the same graph as the function %s (or a "
                             "graph around it)." % (tensor.name, self.name))
        key = id(tensor)
        if key not in self._captured:
            with self.as_default(), ops.control_dependencies(None):
                if tensor.op.type == "Const":
                    inner = self.create_op(
                        "Const", [], {"dtype": tensor.dtype,
                                      "value": tensor.op.get_attr("value")},
                        name="captured_const").outputs[0]
                else:
                    shape = tensor.shape
                    attrs = {"dtype": tensor.dtype}
                    if shape.dims is not None:
                        attrs["shape"] = [-1 if d.value is None else d.value for d in shape.dims]
                    inner = self.create_op("Placeholder", [], attrs,
                                           name="captured").outputs[0]
                    self.captures.append((tensor, inner.op.name))
            self._captured[key] = inner
        return self._captured[key]

    def create_op(self, op_type, inputs, attrs=None, name=None, input_arity=None):
        inputs = [[self.capture(t) for t in arg] if isinstance(arg, (list, tuple))
                  else self.capture(arg) for arg in inputs]
        return super().create_op(op_type, inputs, attrs, name=name, input_arity=input_arity)
