"""TF 1.x's MonitoredSession, MonitoredTrainingSession, SingularMonitoredSession and
Scaffold: a session for training loops that prepares the model, runs hooks around each step
and is remade when a ps task fails, as the C++ MonitoredTrainingSession
(tensorweave/train/monitored_session.h) does.

The policy is the C++ one (tensorweave/train/session_policy.h), shared with the C++
MonitoredTrainingSession. Preparing the model (SessionManager): the chief keeps a model a ps
task still holds, else restores the latest checkpoint of checkpoint_dir, else runs the init
op; other workers wait until the model is ready, polling every 0.2 s (TF waits 30 s between
polls) and logging every 10 s what they wait for.
Recovery: a step failing with AbortedError or UnavailableError (a ps task restarted or is
gone) closes the session, makes a new one as above (retrying with the policy's backoff for
up to recovery_timeout_secs), and runs the step again."""

import inspect
import os

from tensorweave import _native
from tensorweave import errors
from tensorweave.framework import ops
from tensorweave.platform import tf_logging as _log
from tensorweave.ops import control_flow_ops
from tensorweave.ops import variables
from tensorweave.summary import summary as summary_lib
from tensorweave.training import queue_runner
from tensorweave.training import basic_session_run_hooks as hooks_lib
from tensorweave.training import saver as saver_lib
from tensorweave.training.coordinator import Coordinator
from tensorweave.training.session_manager import SessionManager
from tensorweave.training.session_run_hook import SessionRunArgs, SessionRunContext
from tensorweave.training.session_run_hook import SessionRunValues

USE_DEFAULT = object()


def _recoverable(error):
    """Whether a new session gets past `error` (the policy's rule: Aborted, Unavailable)."""
    return isinstance(error, errors.OpError) and _native.is_recoverable_error_code(
        error.error_code)


class Scaffold:
    """The ops that make a model ready (init, ready checks, local init) and its Saver; what
    is not given is made at finalize(), which then finalizes the graph."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None,
                 saver=None, copy_from_scaffold=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            c = copy_from_scaffold
            init_op = init_op or c.init_op
            init_feed_dict = init_feed_dict or c.init_feed_dict
            init_fn = init_fn or c._user_init_fn
            ready_op = ready_op or c.ready_op
            ready_for_local_init_op = ready_for_local_init_op or c.ready_for_local_init_op
            local_init_op = local_init_op or c.local_init_op
            summary_op = summary_op or c.summary_op
            saver = saver or c.saver
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self, checkpoint_dir=None, restore_dir=None):
        """Takes the missing ops from the graph's collections, or makes them (and builds
        the Saver for checkpoint_dir, and for restore_dir when it exists), then finalizes
        the graph. Idempotent."""
        graph = ops.get_default_graph()
        if self._init_op is None:
            self._init_op = _first_or(ops.GraphKeys.INIT_OP, lambda: control_flow_ops.group(
                variables.global_variables_initializer(),
                *ops.get_collection("table_initializer")))
        if self._ready_op is None:
            self._ready_op = _first_or(ops.GraphKeys.READY_OP,
                                       variables.report_uninitialized_variables)
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = _first_or(
                ops.GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: variables.report_uninitialized_variables(
                    variables.global_variables()))
        if self._local_init_op is None:
            self._local_init_op = _first_or(
                ops.GraphKeys.LOCAL_INIT_OP, lambda: control_flow_ops.group(
                    variables.local_variables_initializer()))
        if self._summary_op is None:
            self._summary_op = _first_or(ops.GraphKeys.SUMMARY_OP, summary_lib.merge_all)
        if self._saver is None:
            self._saver = _default_saver()
        if checkpoint_dir and self._saver is not None:
            self._saver.build(checkpoint_dir)
        # The directory of checkpoint_filename_with_path (restored from, not written).
        if restore_dir and self._saver is not None and os.path.isdir(restore_dir) and \
                not graph.finalized:
            self._saver.build(restore_dir)
        graph.finalize()
        return self

    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    init_fn = property(lambda self: self._init_fn)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    local_init_op = property(lambda self: self._local_init_op)
    summary_op = property(lambda self: self._summary_op)
    saver = property(lambda self: self._saver)

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        return _first_or(collection_key, default_constructor)


def _first_or(key, make):
    found = ops.get_collection(key)
    if found:
        if len(found) > 1:
            raise RuntimeError("More than one item in the collection \"%s\". Please indicate "
                               "which one to use by passing it to the constructor." % key)
        return found[0]
    made = make()
    if made is not None:
        ops.add_to_collection(key, made)
    return made


def _default_saver():
    return saver_lib._get_saver_or_default()


class _SessionCreator:
    """Makes a session and prepares the model in it, through a SessionManager over the
    scaffold's ops."""

    def __init__(self, scaffold, master, config, checkpoint_dir=None, max_wait_secs=7200):
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._checkpoint_dir = checkpoint_dir
        self._max_wait_secs = max_wait_secs
        self._restore_dir = None  # a directory only restored from (ChiefSessionCreator)

    def _manager(self):
        s = self._scaffold.finalize(self._checkpoint_dir, self._restore_dir)
        return SessionManager(local_init_op=s.local_init_op, ready_op=s.ready_op,
                              ready_for_local_init_op=s.ready_for_local_init_op,
                              graph=ops.get_default_graph())


class ChiefSessionCreator(_SessionCreator):
    """Restores the latest checkpoint, or initializes the model (keeping it when every
    variable is initialized already)."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        super().__init__(scaffold, master, config, checkpoint_dir)
        self._checkpoint_path = checkpoint_filename_with_path
        if checkpoint_filename_with_path:
            self._restore_dir = os.path.dirname(os.path.abspath(checkpoint_filename_with_path))

    def create_session(self):
        manager = self._manager()
        s = self._scaffold
        return manager.prepare_session(
            self._master, init_op=s.init_op, saver=s.saver, checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_path, config=self._config,
            init_feed_dict=s.init_feed_dict, init_fn=s.init_fn)


class WorkerSessionCreator(_SessionCreator):
    """Waits until the chief made the model ready, then runs the local init op."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        super().__init__(scaffold, master, config, None, max_wait_secs)

    def create_session(self):
        return self._manager().wait_for_session(self._master, config=self._config,
                                                max_wait_secs=self._max_wait_secs)


class _MonitoredSession:
    """Runs hooks around the steps of a session from `session_creator`, remaking it after a
    preemption error when `recoverable`."""

    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120,
                 recovery_timeout_secs=300):
        self._creator = session_creator
        self._hooks = list(hooks or [])
        self._should_recover = should_recover
        self._stop_grace_period_secs = stop_grace_period_secs
        self._recovery_timeout_secs = recovery_timeout_secs
        self._stop_requested = False
        self._sess = None
        self._closed = False
        # As TF: the coordinator suppresses no exception (OutOfRangeError included).
        self.coord = Coordinator(clean_stop_exception_types=[])
        self._graph = ops.get_default_graph()
        # As TF: a graph this session finalizes is unfinalized again at close.
        self._graph_was_finalized = self._graph.finalized
        for h in self._hooks:
            h.begin()
        self._create_session()

    @property
    def graph(self):
        """The graph launched in this session; None once closed (as TF)."""
        return None if self._closed else self._graph

    def _create_session(self):
        def attempt():
            try:
                self._sess = self._creator.create_session()
                self.coord.clear_stop()
                # As TF's _CoordinatedSessionCreator: the graph's queue runners start with
                # each session, under the coordinator, before the hooks hear of it.
                queue_runner.start_queue_runners(sess=self._sess, coord=self.coord)
                for h in self._hooks:
                    h.after_create_session(self._sess, self.coord)
            except errors.OpError as e:
                if _recoverable(e):
                    self._close_session()
                    _log.info("An error was raised while a session was being created: %s. "
                              "Retrying.", e)
                raise

        if self._should_recover:
            _native.retry_while_recoverable(attempt, self._recovery_timeout_secs)
        else:
            attempt()

    def _close_session(self):
        if self._sess is not None:
            # Its queue runners stop first (their cancel ops need the session). What they
            # reported was raised to the program already (run, should_stop).
            self.coord.request_stop()
            try:
                self.coord.join(stop_grace_period_secs=self._stop_grace_period_secs,
                                ignore_live_threads=True)
            except Exception:  # noqa: BLE001 - see above
                pass
            try:
                self._sess.close()
            except errors.OpError:
                pass
            self._sess = None

    def raw_session(self):
        return self._sess

    def should_stop(self):
        if self._closed or self._stop_requested:
            return True
        # As TF's _CoordinatedSession: an exception reported to the coordinator is raised
        # here; a recoverable session answers True instead.
        try:
            self.coord.raise_requested_exception()
        except Exception:  # noqa: BLE001 - as TF's _RecoverableSession._check_stop
            if self._should_recover:
                return True
            raise
        return self.coord.should_stop()

    def _recovering(self, call):
        """call(), remaking the session and calling again after a preemption error."""
        if self._closed:
            raise RuntimeError("Run called on a closed MonitoredSession.")
        while True:
            if self._sess is None:
                self._create_session()
            try:
                return call()
            except errors.OpError as e:
                if not self._should_recover or not _recoverable(e):
                    raise
                _log.info("An error was raised. This may be due to a preemption in a "
                          "connected worker or parameter server. The current session will "
                          "be closed and a new session will be created. Error: %s", e)
                self._close_session()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        return self._recovering(
            lambda: self._run_with_hooks(fetches, feed_dict, options, run_metadata))

    def run_step_fn(self, step_fn):
        """Calls step_fn(step_context): its `session` is the raw session, run_with_hooks
        runs a step with the hooks, request_stop() raises StopIteration (as TF). The whole
        step_fn is called again after a preemption error."""
        try:
            params = [p.name for p in inspect.signature(step_fn).parameters.values()]
        except (TypeError, ValueError):
            params = None
        if params is not None and params not in (["step_context"], ["self", "step_context"]):
            raise ValueError("`step_fn` may either have one `step_context` argument, or "
                             "`self` and `step_context` arguments if it's an instance "
                             "method. Got {} instead.".format(tuple(params)))
        return self._recovering(lambda: step_fn(_StepContext(self)))

    def _run_with_hooks(self, fetches, feed_dict, options, run_metadata):
        if self._closed:
            raise RuntimeError("Run called on a closed MonitoredSession.")
        if self._stop_requested:  # as TF's _HookedSession
            raise RuntimeError("Run called even after should_stop requested.")
        context = SessionRunContext(
            original_args=SessionRunArgs(fetches, feed_dict, options), session=self._sess)
        all_fetches = {"caller": fetches}
        hook_feeds = {}
        for i, h in enumerate(self._hooks):
            args = h.before_run(context)
            if args is None:
                continue
            if args.fetches is not None:
                all_fetches[i] = args.fetches
            if args.feed_dict:
                _raise_if_feeds_intersect(hook_feeds, args.feed_dict,
                                          "Same tensor is fed by two hooks.")
                hook_feeds.update(args.feed_dict)
            options = options or args.options
        _raise_if_feeds_intersect(feed_dict or {}, hook_feeds,
                                  "Same tensor is fed by a SessionRunHook and user.")
        feeds = dict(hook_feeds)
        feeds.update(feed_dict or {})
        results = self._sess.run(all_fetches, feed_dict=feeds, options=options,
                                 run_metadata=run_metadata)
        for i, h in enumerate(self._hooks):
            h.after_run(context, SessionRunValues(results=results.get(i), options=options,
                                                  run_metadata=run_metadata))
        self._stop_requested = self._stop_requested or context.stop_requested
        return results["caller"]

    def close(self):
        self._close(None)

    def _close(self, exception_type):
        if self._closed:
            return
        self._closed = True
        try:
            if exception_type is None and self._sess is not None:
                for h in self._hooks:
                    h.end(self._sess)
        finally:
            try:
                self.coord.request_stop()
                self.coord.join(stop_grace_period_secs=self._stop_grace_period_secs,
                                ignore_live_threads=True)
            finally:
                self._close_session()
                if not self._graph_was_finalized:
                    self._graph._unsafe_unfinalize()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        if exception_type in (errors.OutOfRangeError, StopIteration):
            exception_type = None
        self._close(exception_type)
        return exception_type is None


class _StepContext:
    def __init__(self, monitored):
        self._monitored = monitored

    @property
    def session(self):
        return self._monitored.raw_session()

    def run_with_hooks(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """As MonitoredSession.run (preemption errors go to run_step_fn, which recovers)."""
        return self._monitored._run_with_hooks(fetches, feed_dict, options, run_metadata)

    def request_stop(self):
        """As TF: ends the step_fn by raising StopIteration (which `with` swallows)."""
        raise StopIteration("step_fn has requested the iterations to stop.")


def _raise_if_feeds_intersect(feeds1, feeds2, message):
    intersection = set(feeds1) & set(feeds2)
    if intersection:
        raise RuntimeError(message + " Conflict(s): " + str(list(intersection)))


class MonitoredSession(_MonitoredSession):
    """A recoverable monitored session (ChiefSessionCreator by default)."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator or ChiefSessionCreator(), hooks, True,
                         stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A monitored session for one process: a chief, not recovering, with raw_session()."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                      checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, False, stop_grace_period_secs)


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None,  # noqa: N802
                             hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=USE_DEFAULT,
                             save_summaries_steps=USE_DEFAULT, save_summaries_secs=USE_DEFAULT,
                             config=None, stop_grace_period_secs=120,
                             log_step_count_steps=100, max_wait_secs=7200,
                             save_checkpoint_steps=USE_DEFAULT, summary_dir=None):
    """A MonitoredSession for training: the chief restores or initializes, logs steps/s,
    saves summaries into summary_dir (default: checkpoint_dir; every 100 steps by default)
    and checkpoints into checkpoint_dir (every 600 s by default); other workers wait for
    the model."""
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config,
                                       max_wait_secs=max_wait_secs)
        return MonitoredSession(creator, list(hooks or []), stop_grace_period_secs)
    # As TF: chief-only hooks first, then the step counter and the summary saver (only
    # with a summary or checkpoint directory: without one the graph needs no global step),
    # the checkpoint saver, and the caller's hooks last.
    all_hooks = list(chief_only_hooks or [])
    creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                  checkpoint_dir=checkpoint_dir)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir and log_step_count_steps and log_step_count_steps > 0:
        all_hooks.append(hooks_lib.StepCounterHook(every_n_steps=log_step_count_steps,
                                                   output_dir=summary_dir))
    if summary_dir and ((save_summaries_steps and save_summaries_steps > 0) or
                        (save_summaries_secs and save_summaries_secs > 0)):
        all_hooks.append(hooks_lib.SummarySaverHook(
            scaffold=scaffold, save_steps=save_summaries_steps, save_secs=save_summaries_secs,
            output_dir=summary_dir))
    if checkpoint_dir and ((save_checkpoint_secs and save_checkpoint_secs > 0) or
                           (save_checkpoint_steps and save_checkpoint_steps > 0)):
        all_hooks.append(hooks_lib.CheckpointSaverHook(
            checkpoint_dir, save_steps=save_checkpoint_steps, save_secs=save_checkpoint_secs,
            scaffold=scaffold))
    all_hooks.extend(hooks or [])
    return MonitoredSession(creator, all_hooks, stop_grace_period_secs)
