"""TF 1.x's SyncReplicasOptimizer over tensorweave/train/sync_replicas.h: each update of
the model averages the gradients of `replicas_to_aggregate` workers, and gradients computed
from parameters older than the latest update are dropped as stale.

Two ways to run it, as in TF:
- make_session_run_hook(is_chief, num_tokens) for MonitoredTrainingSession: every worker
  sets its local step when a session is made; the chief puts the initial tokens in and
  runs the C++ chief loop on a session of its own (which survives a restarted ps task).
- the older surface for Supervisor programs: chief_init_op / local_step_init_op,
  ready_for_local_init_op, get_init_tokens_op(), and get_chief_queue_runner(), a
  QueueRunner running the chief's update in a loop on the program's session."""

import threading

from tensorweave import _native
from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.ops import array_ops
from tensorweave.ops import data_flow_ops
from tensorweave.ops import math_ops
from tensorweave.ops import variables
from tensorweave.training import optimizer as optimizer_lib
from tensorweave.training.queue_runner import QueueRunner
from tensorweave.training.session_run_hook import SessionRunHook


class SyncReplicasOptimizer(optimizer_lib.Optimizer):
    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None,
                 variable_averages=None, variables_to_average=None, use_locking=False,
                 name="sync_replicas"):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        if variable_averages is not None:
            raise NotImplementedError("SyncReplicasOptimizer: variable_averages is not "
                                      "supported")
        if not isinstance(opt, optimizer_lib.Optimizer) or \
                isinstance(opt, SyncReplicasOptimizer):
            raise TypeError("SyncReplicasOptimizer wraps one of tf.train's optimizers, got %r"
                            % (opt,))
        super().__init__(use_locking, name)
        self._opt = opt
        self._replicas_to_aggregate = int(replicas_to_aggregate)
        self._total_num_replicas = int(total_num_replicas)
        self._sync = None
        self._nodes = None
        self._global_step = None
        self._token_queue = None
        self.ready_for_local_init_op = None
        self.local_step_init_op = None
        self.chief_init_op = None

    def compute_gradients(self, *args, **kwargs):
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The workers' train op: push the gradients to the accumulators beside each
        variable, then wait for the chief's update (a token)."""
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        if self._sync is not None:
            raise ValueError("apply_gradients can be called only once per "
                             "SyncReplicasOptimizer")
        grads_and_vars = tuple(grads_and_vars)
        if all(g is None for g, _ in grads_and_vars):
            raise ValueError("No gradients provided for any variable: %s." %
                             ([str(v) for _, v in grads_and_vars],))
        graph = global_step.graph
        opt = self._opt
        with graph.name_scope(None), graph._native_building(name or self._name) as device:
            self._sync = _native.SyncReplicas(
                graph._native, opt._native_optimizer(),
                [optimizer_lib._gradient_spec(g) for g, _ in grads_and_vars],
                [optimizer_lib._variable_spec(v) for _, v in grads_and_vars],
                optimizer_lib._variable_spec(global_step), self._replicas_to_aggregate,
                self._total_num_replicas, device)
        opt._adopt_slots(graph, self._sync.made(), [v for _, v in grads_and_vars])
        self._nodes = {k: graph.as_graph_element(v) for k, v in self._sync.nodes().items()}
        init_local_step = self._nodes["init_local_step"]
        # The local step is this worker's: a local variable, never saved.
        variables.Variable._from_native(
            self._nodes["local_step"], init_local_step, dtypes.int64, [],
            collections=[ops.GraphKeys.LOCAL_VARIABLES])
        self._global_step = global_step
        self._token_queue = data_flow_ops.QueueBase(
            [dtypes.int64], [[]], None,
            self._nodes["close_tokens"].inputs[0])
        self.local_step_init_op = init_local_step
        self.chief_init_op = init_local_step
        with graph.as_default():
            self.ready_for_local_init_op = variables.report_uninitialized_variables(
                variables.global_variables())
        return self._nodes["train_op"]

    def _require_applied(self, what):
        if self._sync is None:
            raise ValueError("%s: call apply_gradients (or minimize) first" % what)

    def get_chief_queue_runner(self):
        """A QueueRunner whose one thread applies the aggregated updates in a loop (the
        chief's)."""
        self._require_applied("get_chief_queue_runner")
        close = self._nodes["close_tokens"]
        return QueueRunner(self._token_queue, [self._nodes["chief_update_op"]],
                           close_op=close, cancel_op=close)

    def get_init_tokens_op(self, num_tokens=-1):
        """An op putting num_tokens tokens (-1: replicas_to_aggregate) carrying the global
        step into the token queue, so that workers can take their first steps."""
        self._require_applied("get_init_tokens_op")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError("Too few tokens to finish the first step: %d (given) vs %d "
                             "(needed)" % (num_tokens, tokens_needed))
        if num_tokens <= 0:
            return ops.get_default_graph().create_op("NoOp", [], name="no_init_tokens")
        with ops.colocate_with(self._global_step):
            step = self._global_step.value()
            if step.dtype != dtypes.int64:  # an int32 global step
                step = math_ops.cast(step, dtypes.int64)
            tokens = array_ops.fill([num_tokens], step)
        return self._token_queue.enqueue_many((tokens,))

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        self._require_applied("make_session_run_hook")
        return _SyncReplicasHook(self, is_chief, num_tokens)

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._opt.variables()


class _SyncReplicasHook(SessionRunHook):
    """Sets the local step whenever a session is made; on the chief, also puts the initial
    tokens in and runs the chief loop until the coordinator stops."""

    def __init__(self, sync_opt, is_chief, num_tokens):
        self._sync_opt = sync_opt
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self):
        self._init_tokens = self._sync_opt.get_init_tokens_op(self._num_tokens) \
            if self._is_chief else None

    def after_create_session(self, session, coord):
        session.run(self._sync_opt.local_step_init_op)
        if not self._is_chief:
            return
        session.run(self._init_tokens)
        config = getattr(session, "_config", None)
        filters = list(getattr(config, "device_filters", None) or [])
        sync = self._sync_opt._sync
        sync.start_chief_loop(session.sess_str, filters)
        # The loop ends with the monitored session, whichever way it closes.
        stopper = threading.Thread(target=lambda: (coord.wait_for_stop(), sync.stop()),
                                   daemon=True, name="sync_replicas_stopper")
        coord.register_thread(stopper)
        stopper.start()
