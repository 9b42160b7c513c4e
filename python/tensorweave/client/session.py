"""Session and InteractiveSession with TF 1.x's run(): fetches of any nesting, feeds
checked before the step, numpy results. Steps run in the C++ session (`_native.Session`)
without the GIL; Ctrl-C on the main thread cancels a blocked step and raises
KeyboardInterrupt, and the session stays usable."""

import collections
import threading

import numpy as np

from tensorweave import _native
from tensorweave import errors
from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework import sparse_tensor
from tensorweave.framework.constant_op import to_numpy


class _FetchMapper:
    """Flattens a fetch structure to graph elements and rebuilds it from their values."""

    def __init__(self, graph, fetches):
        self.elements = []  # Tensors and Operations, deduplicated by identity
        self._index = {}
        self._structure = self._flatten(graph, fetches)

    def _add(self, element):
        key = id(element)
        if key not in self._index:
            self._index[key] = len(self.elements)
            self.elements.append(element)
        return self._index[key]

    def _flatten(self, graph, fetch):
        if fetch is None:
            raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
        if isinstance(fetch, (list, tuple)) and not hasattr(fetch, "_fields"):
            return (type(fetch), [self._flatten(graph, f) for f in fetch])
        if isinstance(fetch, tuple) and hasattr(fetch, "_fields"):  # a namedtuple
            return ("namedtuple", type(fetch), [self._flatten(graph, f) for f in fetch])
        if isinstance(fetch, collections.abc.Mapping):
            return ("dict", type(fetch), [(k, self._flatten(graph, v)) for k, v in fetch.items()])
        if isinstance(fetch, sparse_tensor.SparseTensor):  # a SparseTensorValue, as TF
            return ("namedtuple", sparse_tensor.SparseTensorValue,
                    [self._flatten(graph, t) for t in
                     (fetch.indices, fetch.values, fetch.dense_shape)])
        if not isinstance(fetch, (str, ops.Tensor, ops.Operation)) and not hasattr(
                fetch, "_as_graph_element"):
            raise TypeError("Fetch argument %r has invalid type %r, must be a string or Tensor. "
                            "(Can not convert a %s into a Tensor or Operation.)" % (
                                fetch, type(fetch), type(fetch).__name__))
        try:
            element = graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
        except (TypeError, ValueError, KeyError) as e:
            raise ValueError("Fetch argument %r cannot be interpreted as a Tensor. (%s)" %
                             (fetch, str(e).strip("\"'"))) from None
        if isinstance(element, ops.Tensor) and element.dtype == dtypes.resource:
            variable = getattr(element.op, "_variable", None)
            if variable is None:  # a queue's or other resource's handle: nothing to fetch
                raise ValueError("Fetch argument %r cannot be interpreted as a Tensor. (Tensor "
                                 "%s is a resource handle, which cannot be fetched.)" %
                                 (fetch, element.name))
            element = variable.value()  # "v:0": the variable's value, as in TF
        return ("leaf", self._add(element))

    def build(self, values):
        return self._build(self._structure, values)

    def _build(self, node, values):
        kind = node[0]
        if kind == "leaf":
            return values[node[1]]
        if kind == "namedtuple":
            return node[1](*[self._build(n, values) for n in node[2]])
        if kind == "dict":
            out = node[1]()
            for k, n in node[2]:
                out[k] = self._build(n, values)
            return out
        seq_type, children = node
        built = [self._build(n, values) for n in children]
        return built if seq_type is list else seq_type(built)


def _flatten_feed_items(feed_dict):
    for key, value in feed_dict.items():
        if isinstance(key, tuple) and not isinstance(value, (np.ndarray,)) and isinstance(
                value, (tuple, list)) and len(key) == len(value):
            yield from zip(key, value)
        else:
            yield key, value


class BaseSession:
    def __init__(self, target="", graph=None, config=None):
        if graph is None:
            graph = ops.get_default_graph()
        if not isinstance(graph, ops.Graph):
            raise TypeError("graph must be a tf.Graph, but got %s" % type(graph))
        if not isinstance(target, (str, bytes)):
            raise TypeError("target must be a string, but got %s" % type(target))
        if isinstance(target, bytes):
            target = target.decode()
        self._graph = graph
        self._target = target
        self._config = config
        options = config._session_options() if config is not None else {}
        self._session = _native.Session(graph._native, target, **options)
        self._closed = False
        self._lock = threading.Lock()
        self._default_session_context = None

    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    @property
    def sess_str(self):
        return self._target

    def as_default(self):
        return _DefaultSessionContext(self)

    def close(self):
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._session.close()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if self._graph.version == 0:
            raise RuntimeError("The Session graph is empty.  Add operations to the graph "
                               "before calling run().")
        mapper = _FetchMapper(self._graph, fetches)
        feeds, fed = self._feeds(feed_dict)
        fetch_names, targets, positions = [], [], []
        for element in mapper.elements:
            if isinstance(element, ops.Tensor):
                if element in fed:
                    positions.append(("fed", fed[element]))
                else:
                    positions.append(("fetch", len(fetch_names)))
                    fetch_names.append(element.name)
            else:
                positions.append(("op", None))
                targets.append(element.op.name if isinstance(element, ops.Tensor)
                               else element.name)
        timeout_ms = 0  # the session's operation timeout, if any
        if options is not None and getattr(options, "timeout_in_ms", 0):
            timeout_ms = options.timeout_in_ms
        if not fetch_names and not targets:
            values = []
        else:
            try:
                values = self._session.run(feeds, fetch_names, targets, timeout_ms)
            except errors.OpError as e:
                self._attach_op(e)
                raise
        results = []
        for kind, index in positions:
            if kind == "op":
                results.append(None)
            elif kind == "fed":
                results.append(index)
            else:
                v = values[index]
                results.append(v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v)
        return mapper.build(results)

    def _attach_op(self, error):
        """Fills the error's `op` and `node_def` from the node its message names."""
        name = errors.node_name_in(error.message)
        if name is None:
            return
        try:
            op = self._graph.get_operation_by_name(name)
        except (KeyError, ValueError):
            return
        error._op = op
        error._node_def = op.node_def

    def _feeds(self, feed_dict):
        feeds, fed = [], {}
        if not feed_dict:
            return feeds, fed
        for key, value in _flatten_feed_items(feed_dict):
            try:
                tensor = self._graph.as_graph_element(key, allow_tensor=True,
                                                      allow_operation=False)
            except (TypeError, ValueError, KeyError) as e:
                raise TypeError("Cannot interpret feed_dict key as Tensor: " +
                                str(e).strip("\"'")) from None
            if not isinstance(tensor, ops.Tensor):
                raise TypeError("Cannot interpret feed_dict key as Tensor: %r" % (key,))
            if isinstance(value, ops.Tensor):
                raise TypeError("The value of a feed cannot be a tf.Tensor object. Acceptable "
                                "feed values include Python scalars, strings, lists, numpy "
                                "ndarrays, or TensorHandles.")
            array = _feed_array(value, tensor)
            if not tensor.shape.is_compatible_with(array.shape):
                raise ValueError("Cannot feed value of shape %r for Tensor %r, which has shape %r"
                                 % (array.shape, tensor.name, str(tensor.shape)))
            feeds.append((tensor.name, array, tensor.dtype.as_datatype_enum))
            fed[tensor] = array[()] if array.ndim == 0 and tensor.dtype != dtypes.string \
                else array
        return feeds, fed

    def list_devices(self):
        """The devices steps can use, with `name` and `device_type` (and TF's
        `memory_limit_bytes` and `incarnation`, 0 here)."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        return [_DeviceAttributes(name, kind) for name, kind in self._session.list_devices()]

    @staticmethod
    def reset(target, containers=None, config=None):
        """Clears `containers` (None: all of them) on every task of the cluster `target`'s
        master serves, and closes that master's sessions."""
        if isinstance(target, bytes):
            target = target.decode()
        _native.reset(target, list(containers or []))

    def __enter__(self):
        if self._default_session_context is not None:
            raise RuntimeError("Session context managers are not re-entrant. Use "
                               "`Session.as_default()` if you want to enter a session multiple "
                               "times.")
        self._default_graph_context = self._graph.as_default()
        self._default_graph_context.__enter__()
        self._default_session_context = self.as_default()
        self._default_session_context.__enter__()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self._default_session_context.__exit__(exc_type, exc_value, traceback)
        self._default_graph_context.__exit__(exc_type, exc_value, traceback)
        self._default_session_context = None
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001: a finalizer never raises
            pass


def _feed_array(value, tensor):
    dtype = tensor.dtype
    if isinstance(value, int) and not isinstance(value, bool) and dtype.is_integer:
        info = np.iinfo(dtype.as_numpy_dtype)
        if not info.min <= value <= info.max:
            raise TypeError("Type of feed value %r with type %s is not compatible with Tensor "
                            "type %s. Acceptable feed values include Python scalars, strings, "
                            "lists, numpy ndarrays, or TensorHandles." % (
                                value, type(value), dtype.as_numpy_dtype))
    if dtype == dtypes.string:
        return to_numpy(value, dtypes.string)
    return np.asarray(value, dtype=dtype.as_numpy_dtype)


class _DeviceAttributes:
    def __init__(self, name, device_type):
        self.name = name
        self.device_type = device_type
        self.memory_limit_bytes = 0
        self.incarnation = 0

    def __repr__(self):
        return "_DeviceAttributes(%s, %s, %d)" % (self.name, self.device_type,
                                                  self.memory_limit_bytes)


class _DefaultSessionContext:
    def __init__(self, session):
        self._session = session

    def __enter__(self):
        ops._default_session_stack.stack.append(self._session)
        return self._session

    def __exit__(self, *args):
        ops._default_session_stack.stack.pop()


class Session(BaseSession):
    """Runs a graph: in this process (target ''), or on a cluster (grpc://host:port)."""


class InteractiveSession(BaseSession):
    """A Session that makes itself the default session (and its graph the default graph)."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        # Its graph and itself become the defaults of this thread until it closes.
        ops._default_graph_stack.stack.append(self._graph)
        ops._default_session_stack.stack.append(self)
        self._interactive = True

    def close(self):
        super().close()
        if getattr(self, "_interactive", False):
            self._interactive = False
            _remove_last(ops._default_session_stack.stack, self)
            _remove_last(ops._default_graph_stack.stack, self._graph)


def _remove_last(stack, item):
    """Removes the topmost `item` of `stack` (other entries may have been pushed above it)."""
    for i in range(len(stack) - 1, -1, -1):
        if stack[i] is item:
            del stack[i]
            return


__all__ = ["Session", "InteractiveSession", "errors"]
