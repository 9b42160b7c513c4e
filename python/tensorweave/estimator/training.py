"""tf.estimator.train_and_evaluate with TrainSpec and EvalSpec, as TF 1.x runs each role
TF_CONFIG (RunConfig) gives the process:

  local (no cluster)   trains, evaluating after a checkpoint save once throttle_secs have
                       passed since the last evaluation, and the final checkpoint at the end;
  chief, worker        start this task's server and train to max_steps through it (workers
                       wait for the chief's model; TF also sleeps 5 s per worker index);
  ps                   start the server and serve until the job stops it (server.join());
  evaluator            after start_delay_secs, evaluates each new checkpoint at most every
                       throttle_secs, and ends after the one at max_steps (so that with
                       `tw launch --success evaluator:0` the job ends with its last result).

After each evaluation (local and evaluator roles) the EvalSpec's exporters run
(estimator/exporter.py) into model_dir/export/<name>; the evaluation at max_steps is the
final export."""

import collections
import os
import time

from tensorweave import errors
from tensorweave.platform import tf_logging as logging
from tensorweave.training import basic_session_run_hooks as hooks_lib
from tensorweave.training import server_lib


class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks"])):
    def __new__(cls, input_fn, max_steps=None, hooks=None):
        if not callable(input_fn):
            raise TypeError("`input_fn` must be callable, given: %r" % (input_fn,))
        if max_steps is not None and max_steps <= 0:
            raise ValueError("Must specify max_steps > 0, given: %s" % max_steps)
        return super().__new__(cls, input_fn, max_steps, tuple(hooks or ()))


class EvalSpec(collections.namedtuple("EvalSpec", [
        "input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs",
        "throttle_secs"])):
    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None,
                start_delay_secs=120, throttle_secs=600):
        if not callable(input_fn):
            raise TypeError("`input_fn` must be callable, given: %r" % (input_fn,))
        if steps is not None and steps <= 0:
            raise ValueError("Must specify steps > 0, given: %s" % steps)
        if start_delay_secs < 0:
            raise ValueError("Must specify start_delay_secs >= 0, given: %s" %
                             start_delay_secs)
        if throttle_secs < 0:
            raise ValueError("Must specify throttle_secs >= 0, given: %s" % throttle_secs)
        exporters = () if exporters is None else exporters
        exporters = tuple(exporters) if isinstance(exporters, (list, tuple)) else (exporters,)
        from tensorweave.estimator import exporter as exporter_lib
        for e in exporters:
            if not isinstance(e, exporter_lib.Exporter):
                raise TypeError("`exporters` must be an Exporter, an iterable of Exporter, "
                                "or `None`, found %s." % (e,))
        names = [e.name for e in exporters]
        if len(set(names)) != len(names):
            raise ValueError("`exporters` must have unique names.")
        return super().__new__(cls, input_fn, steps, name, tuple(hooks or ()), exporters,
                               start_delay_secs, throttle_secs)


def _evaluate(estimator, eval_spec, checkpoint_path=None):
    return estimator.evaluate(eval_spec.input_fn, steps=eval_spec.steps,
                              hooks=list(eval_spec.hooks), name=eval_spec.name,
                              checkpoint_path=checkpoint_path)


def _export(estimator, eval_spec, checkpoint_path, result, is_final):
    """Runs the EvalSpec's exporters after the evaluation `result` of `checkpoint_path`;
    returns what they exported (None for an exporter that did not)."""
    results = []
    for exporter in eval_spec.exporters:
        export_path = os.path.join(estimator.model_dir, "export", exporter.name)
        results.append(exporter.export(estimator, export_path, checkpoint_path, result,
                                       is_final))
    return results


class _EvaluateAfterSaves(hooks_lib.CheckpointSaverListener):
    """Evaluates the checkpoint just saved, once throttle_secs have passed since the last
    evaluation; remembers the last result."""

    def __init__(self, estimator, eval_spec, max_steps):
        self._estimator = estimator
        self._eval_spec = eval_spec
        self._max_steps = max_steps
        self._last_time = None
        self.last_step = None
        self.result = None
        self.exports = []

    def after_save(self, session, global_step_value):
        now = time.time()
        if self._last_time is not None and now - self._last_time < self._eval_spec.throttle_secs:
            return False
        if global_step_value == 0:  # the untrained model's first save
            return False
        self._last_time = now
        path = self._estimator.latest_checkpoint()
        self.result = _evaluate(self._estimator, self._eval_spec, checkpoint_path=path)
        self.last_step = self.result["global_step"]
        self.exports = _export(self._estimator, self._eval_spec, path, self.result,
                               is_final=self.last_step == self._max_steps)
        return False


def _std_server(config):
    return server_lib.Server(config.cluster_spec, job_name=config.task_type,
                             task_index=config.task_id, config=config.session_config,
                             start=True)


def _run_evaluator(estimator, train_spec, eval_spec):
    if eval_spec.start_delay_secs:
        logging.info("Waiting %d secs before starting evaluation.", eval_spec.start_delay_secs)
        time.sleep(eval_spec.start_delay_secs)
    last_path = None
    while True:
        started = time.time()
        path = estimator.latest_checkpoint()
        if path is None or path == last_path:
            logging.info("No new checkpoint ready for evaluation.")
            # As TF, the next look is throttle_secs after this one; at least half a second.
            time.sleep(max(eval_spec.throttle_secs, 0.5))
            continue
        try:
            result = _evaluate(estimator, eval_spec, checkpoint_path=path)
        except (errors.NotFoundError, errors.DataLossError, ValueError) as e:
            if isinstance(e, ValueError) and "not a valid checkpoint" not in str(e):
                raise
            # The chief's keep_checkpoint_max removed it meanwhile: take the next one.
            logging.warning("Checkpoint %s went away before it was evaluated (%s); "
                            "waiting for the next one.", path, e)
            time.sleep(0.5)
            continue
        last_path = path
        final = train_spec.max_steps is not None and \
            result["global_step"] >= train_spec.max_steps
        exports = _export(estimator, eval_spec, path, result, is_final=final)
        if final:
            logging.info("Exiting evaluation, global_step=%s >= train max_steps=%s",
                         result["global_step"], train_spec.max_steps)
            return result, exports
        time.sleep(max(eval_spec.throttle_secs - (time.time() - started), 0))


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains and evaluates as this process's role (TF_CONFIG) asks; returns the last
    evaluation's metrics and export results (local and evaluator roles), else (None, None)."""
    if not isinstance(train_spec, TrainSpec):
        raise TypeError("`train_spec` must have type `tf.estimator.TrainSpec`. Got: %s" %
                        type(train_spec))
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError("`eval_spec` must have type `tf.estimator.EvalSpec`. Got: %s" %
                        type(eval_spec))
    config = estimator.config
    task_type = config.task_type
    if task_type is None:
        listener = _EvaluateAfterSaves(estimator, eval_spec, train_spec.max_steps)
        estimator.train(train_spec.input_fn, max_steps=train_spec.max_steps,
                        hooks=list(train_spec.hooks), saving_listeners=[listener])
        latest = estimator.latest_checkpoint()
        step = estimator._checkpoint_step()
        if listener.result is None or listener.last_step != step:
            listener.result = _evaluate(estimator, eval_spec, checkpoint_path=latest)
            listener.exports = _export(estimator, eval_spec, latest, listener.result,
                                       is_final=True)
        return listener.result, listener.exports
    if task_type == "evaluator":
        return _run_evaluator(estimator, train_spec, eval_spec)
    if task_type == "ps":
        server = _std_server(config)
        logging.info("Start Tensorflow server (ps %d): serving until the job stops it.",
                     config.task_id)
        server.join()
        return None, None
    if task_type in ("chief", "master", "worker"):
        _std_server(config)  # the session's master; kept running until the process ends
        estimator.train(train_spec.input_fn, max_steps=train_spec.max_steps,
                        hooks=list(train_spec.hooks))
        return None, None
    raise ValueError("Task type %s is not supported. Supported task types are chief, "
                     "master, worker, ps, evaluator." % task_type)
