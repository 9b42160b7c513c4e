"""TF 1.x's MonitoredSession, MonitoredTrainingSession, SingularMonitoredSession and
Scaffold: a session for training loops that prepares the model, runs hooks around each step
and is remade when a ps task fails, as the C++ MonitoredTrainingSession
(tensorweave/train/monitored_session.h) does.

Preparing the model: the chief restores the latest checkpoint of checkpoint_dir, or runs
the init op when there is none (variables a ps task still holds are kept when every
variable is initialized); other workers wait until the model is ready, polling every half
second (TF waits 30 s between polls) and logging every 10 s what they wait for.
Recovery: a step failing with AbortedError or UnavailableError (a ps task restarted or is
gone) closes the session, makes a new one as above, and runs the step again."""

import time

from tensorweave import errors
from tensorweave.client.session import Session
from tensorweave.framework import ops
from tensorweave.platform import tf_logging as _log
from tensorweave.ops import control_flow_ops
from tensorweave.ops import variables
from tensorweave.training import basic_session_run_hooks as hooks_lib
from tensorweave.training import saver as saver_lib
from tensorweave.training.coordinator import Coordinator
from tensorweave.training.session_run_hook import SessionRunArgs, SessionRunContext
from tensorweave.training.session_run_hook import SessionRunValues

_PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)
_POLL_SECS = 0.5
_LOG_EVERY_SECS = 10.0
USE_DEFAULT = object()


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

    def finalize(self, checkpoint_dir=None):
        """Takes the missing ops from the graph's collections, or makes them (and builds
        the Saver for checkpoint_dir), then finalizes the graph. Idempotent."""
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
        if self._saver is None:
            self._saver = _default_saver()
        if checkpoint_dir and self._saver is not None:
            self._saver.build(checkpoint_dir)
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
    savers = ops.get_collection(ops.GraphKeys.SAVERS)
    if savers:
        if len(savers) > 1:
            raise RuntimeError("More than one item in collection %s. Please indicate which one "
                               "to use by passing it to the constructor." %
                               ops.GraphKeys.SAVERS)
        return savers[0]
    saver = saver_lib.Saver(sharded=True, allow_empty=True)
    ops.add_to_collection(ops.GraphKeys.SAVERS, saver)
    return saver


def _names(values):
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


def _not_ready(sess, op):
    """The variables `op` reports uninitialized (names), [] when there is no op."""
    if op is None:
        return []
    return _names(sess.run(op))


class _SessionCreator:
    """Makes a session and prepares the model in it."""

    def __init__(self, scaffold, master, config, checkpoint_dir=None, max_wait_secs=7200):
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._checkpoint_dir = checkpoint_dir
        self._max_wait_secs = max_wait_secs

    def _new_session(self):
        self._scaffold.finalize(self._checkpoint_dir)
        return Session(self._master, config=self._config)

    def _local_init(self, sess):
        """Runs the local init op once the global variables are ready; False if not yet."""
        if _not_ready(sess, self._scaffold.ready_for_local_init_op):
            return False
        if self._scaffold.local_init_op is not None:
            sess.run(self._scaffold.local_init_op)
        return True


class ChiefSessionCreator(_SessionCreator):
    """Restores the latest checkpoint, or initializes the model (keeping it when every
    variable is initialized already)."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        super().__init__(scaffold, master, config, checkpoint_dir)
        self._checkpoint_path = checkpoint_filename_with_path

    def create_session(self):
        sess = self._new_session()
        try:
            s = self._scaffold
            path = self._checkpoint_path
            if path is None and self._checkpoint_dir:
                path = saver_lib.latest_checkpoint(self._checkpoint_dir)
            if path is not None and s.saver is not None:
                s.saver.restore(sess, path)
                _log.info("Restored the model from %s", path)
            elif _not_ready(sess, s.ready_op):
                if s.init_op is not None:
                    sess.run(s.init_op, feed_dict=s.init_feed_dict)
                if s.init_fn:
                    s.init_fn(sess)
            if not self._local_init(sess):
                raise RuntimeError("Init operations did not make model ready for local_init. "
                                   "Variables not initialized: %s" %
                                   ", ".join(_not_ready(sess, s.ready_for_local_init_op)))
            missing = _not_ready(sess, s.ready_op)
            if missing:
                raise RuntimeError("Init operations did not make model ready. Variables not "
                                   "initialized: %s" % ", ".join(missing))
            return sess
        except BaseException:
            sess.close()
            raise


class WorkerSessionCreator(_SessionCreator):
    """Waits until the chief made the model ready, then runs the local init op."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        super().__init__(scaffold, master, config, None, max_wait_secs)

    def create_session(self):
        sess = self._new_session()
        try:
            deadline = time.monotonic() + self._max_wait_secs
            next_log = time.monotonic() + _LOG_EVERY_SECS
            while True:
                if self._local_init(sess):
                    missing = _not_ready(sess, self._scaffold.ready_op)
                    if not missing:
                        return sess
                else:
                    missing = _not_ready(sess, self._scaffold.ready_for_local_init_op)
                now = time.monotonic()
                if now >= deadline:
                    raise errors.DeadlineExceededError(
                        None, None, "Session was not ready after waiting %d secs: variables "
                        "not initialized: %s" % (self._max_wait_secs, ", ".join(missing)))
                if now >= next_log:
                    _log.info("Waiting for model to be ready. Variables not initialized: %s",
                              ", ".join(missing))
                    next_log = now + _LOG_EVERY_SECS
                time.sleep(_POLL_SECS)
        except BaseException:
            sess.close()
            raise


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
        self.coord = Coordinator()
        for h in self._hooks:
            h.begin()
        self._create_session()

    @property
    def graph(self):
        return ops.get_default_graph()

    def _create_session(self):
        deadline = time.monotonic() + self._recovery_timeout_secs
        while True:
            try:
                self._sess = self._creator.create_session()
                self.coord.clear_stop()
                for h in self._hooks:
                    h.after_create_session(self._sess, self.coord)
                return
            except _PREEMPTION_ERRORS as e:
                self._close_session()
                if not self._should_recover or time.monotonic() >= deadline:
                    raise
                _log.info("An error was raised while a session was being created: %s. "
                          "Retrying.", e)
                time.sleep(_POLL_SECS)

    def _close_session(self):
        if self._sess is not None:
            try:
                self._sess.close()
            except errors.OpError:
                pass
            self._sess = None

    def raw_session(self):
        return self._sess

    def should_stop(self):
        return self._closed or self._stop_requested or self.coord.should_stop()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        while True:
            if self._sess is None:
                self._create_session()
            try:
                return self._run_with_hooks(fetches, feed_dict, options, run_metadata)
            except _PREEMPTION_ERRORS as e:
                if not self._should_recover:
                    raise
                _log.info("An error was raised. This may be due to a preemption in a "
                          "connected worker or parameter server. The current session will "
                          "be closed and a new session will be created. Error: %s", e)
                self._close_session()

    def run_step_fn(self, step_fn):
        """Calls step_fn(step_context) whose run_with_hooks runs a step with the hooks."""
        return step_fn(_StepContext(self))

    def _run_with_hooks(self, fetches, feed_dict, options, run_metadata):
        context = SessionRunContext(
            original_args=SessionRunArgs(fetches, feed_dict, options), session=self._sess)
        all_fetches = {"caller": fetches}
        feeds = dict(feed_dict or {})
        for i, h in enumerate(self._hooks):
            args = h.before_run(context)
            if args is None:
                continue
            if args.fetches is not None:
                all_fetches[i] = args.fetches
            for key, value in (args.feed_dict or {}).items():
                if key in feeds:
                    raise RuntimeError("Same tensor is fed by a SessionRunHook and user.")
                feeds[key] = value
            options = options or args.options
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

    def run_with_hooks(self, *args, **kwargs):
        return self._monitored._run_with_hooks(*args, **kwargs)

    def request_stop(self):
        self._monitored._stop_requested = True


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
    """A MonitoredSession for training: the chief restores or initializes, logs steps/s
    and saves checkpoints into checkpoint_dir (every 600 s by default); other workers wait
    for the model."""
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    scaffold = scaffold or Scaffold()
    all_hooks = list(hooks or [])
    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config,
                                       max_wait_secs=max_wait_secs)
        return MonitoredSession(creator, all_hooks, stop_grace_period_secs)
    all_hooks.extend(chief_only_hooks or [])
    creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                  checkpoint_dir=checkpoint_dir)
    if log_step_count_steps and log_step_count_steps > 0:
        all_hooks.append(hooks_lib.StepCounterHook(every_n_steps=log_step_count_steps))
    if checkpoint_dir and ((save_checkpoint_secs and save_checkpoint_secs > 0) or
                           (save_checkpoint_steps and save_checkpoint_steps > 0)):
        all_hooks.append(hooks_lib.CheckpointSaverHook(
            checkpoint_dir, save_steps=save_checkpoint_steps,
            save_secs=None if save_checkpoint_steps else save_checkpoint_secs,
            scaffold=scaffold))
    return MonitoredSession(creator, all_hooks, stop_grace_period_secs)
