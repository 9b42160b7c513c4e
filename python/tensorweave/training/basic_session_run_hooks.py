"""TF 1.x's standard hooks: stop at a step, save checkpoints, count steps, save summaries,
log tensors, stop on NaN, run final ops. Messages go to the "tensorflow" logger, as TF's
do."""

import os

import numpy as np

from tensorweave import _native
from tensorweave.framework import ops
from tensorweave.platform import tf_logging as _log
from tensorweave.summary.writer import FileWriterCache
from tensorweave.training import saver as saver_lib
from tensorweave.training import training_util
from tensorweave.training.session_run_hook import SessionRunArgs, SessionRunHook



# Triggers every `every_secs` seconds or every `every_steps` steps (exactly one): the C++
# timer (tensorweave/train/step_timer.h) that the C++ hooks use too.
SecondOrStepTimer = _native.SecondOrStepTimer


def _require_global_step(hook):
    step = training_util.get_global_step()
    if step is None:
        raise RuntimeError("Global step should be created to use %s." % hook)
    return step


class StopAtStepHook(SessionRunHook):
    """Requests stop once the global step reaches `last_step`, or `num_steps` steps after
    the step at which a session was made."""

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        self._global_step_tensor = _require_global_step("StopAtStepHook")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        # The value fetched is from before this step's update: +1 is where it is now.
        if int(run_values.results) + 1 >= self._last_step:
            # Other workers move the step too: read it again before stopping.
            if int(run_context.session.run(self._global_step_tensor)) >= self._last_step:
                run_context.request_stop()


class CheckpointSaverListener:
    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint every `save_secs` or `save_steps` (exactly one), once right after
    each session is made, and at the end."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None):
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._scaffold = scaffold
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = listeners or []

    def begin(self):
        self._global_step_tensor = _require_global_step("CheckpointSaverHook")
        os.makedirs(self._checkpoint_dir, exist_ok=True)
        saver = self._get_saver()
        if saver is None and self._scaffold is not None:
            # The Scaffold makes its Saver at finalize, from the SAVERS collection: made
            # now, so that it can be built for this directory before the graph is finalized.
            saver = saver_lib._get_saver_or_default()
        if saver is not None:
            saver.build(self._checkpoint_dir)  # before the graph is finalized
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        step = int(session.run(self._global_step_tensor))
        self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        step = int(run_values.results) + 1
        if self._timer.should_trigger_for_step(step):
            step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(step):
                self._timer.update_last_triggered_step(step)
                if self._save(run_context.session, step):
                    run_context.request_stop()

    def end(self, session):
        step = int(session.run(self._global_step_tensor))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _save(self, session, step):
        """Saves; True when a listener asks to stop."""
        _log.info("Saving checkpoints for %d into %s.", step, self._save_path)
        for listener in self._listeners:
            listener.before_save(session, step)
        self._get_saver().save(session, self._save_path, global_step=step)
        should_stop = False
        for listener in self._listeners:  # every listener hears of the save, as in TF
            if listener.after_save(session, step):
                _log.info("A CheckpointSaverListener requested that training be stopped. "
                          "listener: %s", listener)
                should_stop = True
        return should_stop

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        # TF looks in the SAVERS collection when it first saves, after the Scaffold put its
        # default Saver there; here the Saver must be built in begin(), before the graph is
        # finalized, so the same default Saver is made now (the Scaffold then takes it).
        self._saver = saver_lib._get_saver_or_default()
        return self._saver


class StepCounterHook(SessionRunHook):
    """Logs the global steps per second and, with an output_dir or summary_writer, writes
    them as the summary "<global step's name>/sec" ("global_step/sec")."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._counter = _native.StepRateCounter(every_steps=every_n_steps,
                                                every_secs=every_n_secs)
        self._output_dir = output_dir
        self._summary_writer = summary_writer

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._global_step_tensor = _require_global_step("StepCounterHook")
        self._summary_tag = self._global_step_tensor.op.name + "/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        step = int(run_values.results) + 1
        steps_per_sec = self._counter.record(step)
        if steps_per_sec is not None:
            if self._summary_writer is not None:
                self._summary_writer._add_scalar(self._summary_tag, steps_per_sec, step)
            _log.info("%s: %g", self._summary_tag, steps_per_sec)


class SummarySaverHook(SessionRunHook):
    """Saves the summaries of `summary_op` (or of the scaffold's summary_op: merge_all()
    by default) every `save_steps` or `save_secs` (exactly one), into `summary_writer` or
    the shared FileWriter of `output_dir`; a SessionLog START marks the first step."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._schedule_args = dict(every_secs=save_secs, every_steps=save_steps)
        _native.SummarySchedule(**self._schedule_args)  # TF's ValueError at construction

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._schedule = _native.SummarySchedule(**self._schedule_args)
        self._global_step_tensor = _require_global_step("SummarySaverHook")

    def before_run(self, run_context):
        requests = {"global_step": self._global_step_tensor}
        if self._schedule.request_summary():
            summary_op = self._get_summary_op()
            if summary_op is not None:
                requests["summary"] = summary_op
        return SessionRunArgs(requests)

    def after_run(self, run_context, run_values):
        if not self._summary_writer:
            return
        global_step = int(run_values.results["global_step"]) + 1
        if self._schedule.needs_exact_step():
            global_step = int(run_context.session.run(self._global_step_tensor))
        session_start, write_summary = self._schedule.record(global_step)
        if session_start:
            self._summary_writer._add_session_start(global_step)
        if write_summary:
            for summary in run_values.results.get("summary", []):
                self._summary_writer.add_summary(summary, global_step)

    def end(self, session=None):
        if self._summary_writer:
            self._summary_writer.flush()

    def _get_summary_op(self):
        summary_op = self._summary_op if self._summary_op is not None else \
            self._scaffold.summary_op
        if summary_op is None:
            return None
        return summary_op if isinstance(summary_op, list) else [summary_op]


class LoggingTensorHook(SessionRunHook):
    """Logs the values of `tensors` (a dict of tag -> tensor or name, or a list) every N
    local steps or seconds, and/or at the end."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and "
                             "every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError("invalid every_n_iter=%s." % every_n_iter)
        # As TF: a list's items are their own tags, in order; a dict's tags are sorted.
        if not isinstance(tensors, dict):
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        else:
            self._tag_order = sorted(tensors.keys())
        self._tensors = tensors
        self._formatter = formatter
        self._timer = None if only_log_at_end else SecondOrStepTimer(
            every_secs=every_n_secs, every_steps=every_n_iter)
        self._log_at_end = at_end

    def begin(self):
        if self._timer is not None:
            self._timer.reset()
        self._current = {tag: _as_graph_element(t) for tag, t in self._tensors.items()}
        self._iter = 0

    def before_run(self, run_context):
        self._should_trigger = self._timer is not None and \
            self._timer.should_trigger_for_step(self._iter)
        return SessionRunArgs(self._current) if self._should_trigger else None

    def _log_values(self, values):
        elapsed = None
        if self._timer is not None:
            elapsed, _ = self._timer.update_last_triggered_step(self._iter)
        with np.printoptions(suppress=True):
            if self._formatter:
                _log.info(self._formatter(values))
                return
            stats = ", ".join("%s = %s" % (tag, values[tag]) for tag in self._tag_order)
            if elapsed is not None:  # TF's "(0.123 sec)" since the previous line
                _log.info("%s (%.3f sec)", stats, elapsed)
            else:
                _log.info("%s", stats)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log_values(run_values.results)
        self._iter += 1

    def end(self, session):
        if self._log_at_end:
            self._log_values(session.run(self._current))


def _as_graph_element(obj):
    """TF's basic_session_run_hooks._as_graph_element: a tensor of the default graph, or a
    name: "x:0", or "x" for the only output of op x."""
    graph = ops.get_default_graph()
    if not isinstance(obj, str):
        if not hasattr(obj, "graph") or obj.graph is not graph:
            raise ValueError("Passed %s should have graph attribute that is equal to current "
                             "graph %s." % (obj, graph))
        return obj
    if ":" in obj:
        return graph.as_graph_element(obj)
    element = graph.as_graph_element(obj + ":0")
    try:
        graph.as_graph_element(obj + ":1")
    except (KeyError, ValueError):
        pass
    else:
        raise ValueError("Name %s is ambiguous, as this `Operation` has multiple outputs "
                         "(at least 2)." % obj)
    return element


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Fails the step (NanLossDuringTrainingError), or only requests stop, when the loss is
    NaN."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            if self._fail_on_nan_loss:
                _log.error("Model diverged with loss = NaN.")
                raise NanLossDuringTrainingError
            _log.warning("Model diverged with loss = NaN. Stopping training.")
            run_context.request_stop()


class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` when the session ends; their values are final_ops_values."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is not None:
            self._final_ops_values = session.run(self._final_ops,
                                                 feed_dict=self._final_ops_feed_dict)
