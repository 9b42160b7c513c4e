"""tf.estimator.Estimator as TF 1.x has it: a model_fn builds the model for a mode in a
fresh graph; train runs it under MonitoredTrainingSession (checkpoints, summaries, step
logging and recovery are that session's, over the C++ runtime), evaluate restores a
checkpoint and runs the eval_metric_ops to the input's end, predict yields predictions.
On a cluster (TF_CONFIG through RunConfig) the model's variables are placed on the ps
tasks by replica_device_setter and the session's master is this task's server."""

import contextlib
import inspect
import os
import shutil
import tempfile

import numpy as np

from tensorweave.data import dataset_ops
from tensorweave.estimator import model_fn as model_fn_lib
from tensorweave.framework import ops
from tensorweave.ops import metrics_impl
from tensorweave.ops import variables
from tensorweave.platform import tf_logging as logging
from tensorweave.run_config import RunConfig
from tensorweave.summary import summary as summary_lib
from tensorweave.summary import writer as summary_writer
from tensorweave.training import basic_session_run_hooks as hooks_lib
from tensorweave.training import checkpoint_utils
from tensorweave.training import device_setter
from tensorweave.training import monitored_session
from tensorweave.training import saver as saver_lib
from tensorweave.training import training_util

ModeKeys = model_fn_lib.ModeKeys

_MODEL_FN_ARGS = ("features", "labels", "mode", "params", "config")


def _fn_args(fn):
    return tuple(inspect.signature(fn).parameters)


def _timestamped_dir(export_dir_base):
    """export_dir_base/<seconds since the epoch>, a name not taken yet (TF waits for the
    next second; the next free second is taken here instead)."""
    import time
    stamp = int(time.time())
    while (os.path.exists(os.path.join(export_dir_base, str(stamp))) or
           os.path.exists(os.path.join(export_dir_base, "temp-%d" % stamp))):
        stamp += 1
    os.makedirs(export_dir_base, exist_ok=True)
    return os.path.join(export_dir_base, str(stamp))


class Estimator:
    """Trains, evaluates and predicts with the model `model_fn` builds, keeping its
    checkpoints and summaries in `model_dir`."""

    def __init__(self, model_fn, model_dir=None, config=None, params=None,
                 warm_start_from=None):
        if model_fn is None or not callable(model_fn):
            raise ValueError("model_fn must be provided to Estimator.")
        args = _fn_args(model_fn)
        if "features" not in args:
            raise ValueError("model_fn (%s) must include features argument." % model_fn)
        unknown = [a for a in args if a not in _MODEL_FN_ARGS and a != "self"]
        if unknown:
            raise ValueError("model_fn (%s) has following not expected args: %s" %
                             (model_fn, unknown))
        if params is not None and "params" not in args:
            raise ValueError("model_fn (%s) does not include params argument, but params "
                             "(%s) is passed to Estimator." % (model_fn, params))
        config = config if config is not None else RunConfig()
        if not isinstance(config, RunConfig):
            raise ValueError("config must be an instance of RunConfig, but provided %s." %
                             (config,))
        if model_dir is not None and config.model_dir is not None and (
                os.fspath(model_dir) != config.model_dir):
            raise ValueError("model_dir are set both in constructor and RunConfig, but with "
                             "different values. In constructor: '%s', in RunConfig: '%s'." %
                             (model_dir, config.model_dir))
        model_dir = model_dir if model_dir is not None else config.model_dir
        if model_dir is None:
            model_dir = tempfile.mkdtemp()
            logging.warning("Using temporary folder as model directory: %s", model_dir)
        if config.model_dir != os.fspath(model_dir):  # a copy, as TF: the caller's stays
            config = config.replace(model_dir=os.fspath(model_dir))
        self._model_fn = model_fn
        self._model_dir = config.model_dir
        self._config = config
        self._params = dict(params or {})
        self._warm_start_from = warm_start_from
        logging.info("Using config: %s", {k: v for k, v in vars(config).items()
                                          if not k.startswith("_")})

    model_dir = property(lambda self: self._model_dir)
    config = property(lambda self: self._config)
    params = property(lambda self: dict(self._params))
    model_fn = property(lambda self: self._model_fn)

    # ---- checkpoints ----
    def latest_checkpoint(self):
        return saver_lib.latest_checkpoint(self._model_dir)

    def get_variable_names(self):
        return [name for name, _ in checkpoint_utils.list_variables(self._model_dir)]

    def get_variable_value(self, name):
        return checkpoint_utils.load_variable(self._model_dir, name)

    def _checkpoint_step(self):
        latest = self.latest_checkpoint()
        if latest is None:
            return 0
        reader = checkpoint_utils.load_checkpoint(latest)
        return int(reader.get_tensor("global_step")) if reader.has_tensor("global_step") else 0

    # ---- building the model ----
    def _optional_args(self, fn, mode):
        """The mode, params and config arguments `fn` takes, by name (TF's rule)."""
        args = _fn_args(fn)
        given = {"mode": mode, "params": self.params, "config": self._config}
        return {name: value for name, value in given.items() if name in args}

    def _call_input_fn(self, input_fn, mode):
        result = input_fn(**self._optional_args(input_fn, mode))
        if isinstance(result, dataset_ops.Dataset):
            result = result.make_one_shot_iterator().get_next()
        if isinstance(result, (tuple, list)) and len(result) == 2:
            return result[0], result[1]
        return result, None

    def _call_model_fn(self, features, labels, mode):
        kwargs = self._optional_args(self._model_fn, mode)
        if "labels" in _fn_args(self._model_fn):
            kwargs["labels"] = labels
        elif labels is not None and mode != ModeKeys.PREDICT:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        spec = self._model_fn(features=features, **kwargs)
        if not isinstance(spec, model_fn_lib.EstimatorSpec):
            raise ValueError("model_fn should return an EstimatorSpec, got %r." % (spec,))
        return spec

    def _device_fn(self):
        """RunConfig's device_fn when given; else variables on the ps tasks, ops on this
        task, when the cluster has ps tasks (round robin, as ParameterServerStrategy
        places them too)."""
        c = self._config
        if c.device_fn is not None:
            return c.device_fn
        if c.num_ps_replicas <= 0 or c.task_type is None:
            return None
        return device_setter.replica_device_setter(
            ps_tasks=c.num_ps_replicas, cluster=c.cluster_spec, merge_devices=True,
            worker_device="/job:%s/task:%d" % (c.task_type, c.task_id))

    def _partitioning(self):
        """The train_distribute strategy's variable_partitioner while the model is built
        (in every mode, so that evaluation's graph reads the checkpoint's parts as they
        were trained)."""
        strategy = self._config.train_distribute
        if strategy is None:
            return contextlib.nullcontext()
        return strategy._partitioning()

    def _build(self, input_fn, mode):
        """In the default graph (a fresh one): the global step, the input, the model; to
        train on a cluster, the variables on its ps tasks (evaluation and prediction run
        in a session of their own, as TF's do)."""
        if self._config.tf_random_seed is not None:
            ops.get_default_graph().seed = self._config.tf_random_seed
        device_fn = self._device_fn() if mode == ModeKeys.TRAIN else None
        with ops.device(device_fn):
            global_step = training_util.get_or_create_global_step()
        features, labels = self._call_input_fn(input_fn, mode)
        with ops.device(device_fn), self._partitioning():
            spec = self._call_model_fn(features, labels, mode)
        return global_step, spec

    def _warm_start_scaffold(self, scaffold):
        """A scaffold whose init_fn loads warm_start_from's values into the variables of
        the same names (when training starts without a checkpoint of its own)."""
        if self._warm_start_from is None or self.latest_checkpoint() is not None:
            return scaffold
        source = self._warm_start_from
        source = getattr(source, "ckpt_to_initialize_from", source)
        reader = checkpoint_utils.load_checkpoint(source)
        user_init_fn = scaffold.init_fn if scaffold is not None else None

        def init_fn(_scaffold, session):
            if user_init_fn is not None:
                user_init_fn(_scaffold, session)
            for v in variables.trainable_variables():
                name = v.op.name
                if reader.has_tensor(name):
                    v.load(reader.get_tensor(name), session)
            logging.info("Warm-started from %s", source)

        return monitored_session.Scaffold(init_fn=init_fn, copy_from_scaffold=scaffold) \
            if scaffold is not None else monitored_session.Scaffold(init_fn=init_fn)

    # ---- train ----
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError("Must specify steps > 0, given: %s" % steps)
        if max_steps is not None and max_steps <= 0:
            raise ValueError("Must specify max_steps > 0, given: %s" % max_steps)
        if max_steps is not None and self._checkpoint_step() >= max_steps:
            logging.info("Skipping training since max_steps has already saved.")
            return self
        config = self._config
        with ops.Graph().as_default():
            global_step, spec = self._build(input_fn, ModeKeys.TRAIN)
            all_hooks = []
            if steps is not None or max_steps is not None:
                all_hooks.append(hooks_lib.StopAtStepHook(num_steps=steps, last_step=max_steps))
            all_hooks.append(hooks_lib.NanTensorHook(spec.loss))
            if config.log_step_count_steps:
                all_hooks.append(hooks_lib.LoggingTensorHook(
                    {"loss": spec.loss, "step": global_step},
                    every_n_iter=config.log_step_count_steps))
            all_hooks.extend(spec.training_hooks)
            all_hooks.extend(hooks or [])
            scaffold = self._warm_start_scaffold(spec.scaffold) or monitored_session.Scaffold()
            if scaffold.saver is None and not ops.get_collection(ops.GraphKeys.SAVERS):
                # As TF's Estimator: the checkpoints RunConfig asks to keep.
                scaffold = monitored_session.Scaffold(
                    saver=saver_lib.Saver(
                        sharded=True, max_to_keep=config.keep_checkpoint_max,
                        keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours),
                    copy_from_scaffold=scaffold)
            chief_hooks = list(spec.training_chief_hooks)
            if config.save_checkpoints_steps or config.save_checkpoints_secs:
                chief_hooks.append(hooks_lib.CheckpointSaverHook(
                    self._model_dir, save_secs=config.save_checkpoints_secs,
                    save_steps=config.save_checkpoints_steps, scaffold=scaffold,
                    listeners=saving_listeners))
            loss = None
            with monitored_session.MonitoredTrainingSession(
                    master=config.master, is_chief=config.is_chief,
                    checkpoint_dir=self._model_dir, scaffold=scaffold, hooks=all_hooks,
                    chief_only_hooks=chief_hooks, save_checkpoint_secs=None,
                    save_checkpoint_steps=None,
                    save_summaries_steps=config.save_summary_steps,
                    config=config.session_config,
                    log_step_count_steps=config.log_step_count_steps) as session:
                while not session.should_stop():
                    _, loss = session.run([spec.train_op, spec.loss])
            logging.info("Loss for final step: %s.", loss)
        return self

    # ---- evaluate ----
    def _eval_dir(self, name):
        return os.path.join(self._model_dir, "eval" if not name else "eval_" + name)

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """The eval_metric_ops (and the mean loss) over the input, or `steps` batches of
        it, with the latest checkpoint's (or `checkpoint_path`'s) variables; also written
        as a summary into model_dir/eval (eval_<name>)."""
        if steps is not None and steps <= 0:
            raise ValueError("Must specify steps > 0, given: %s" % steps)
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if checkpoint_path is None:
            logging.info("Could not find trained model in model_dir: %s, running "
                         "initialization to evaluate.", self._model_dir)
        with ops.Graph().as_default():
            global_step, spec = self._build(input_fn, ModeKeys.EVAL)
            metrics = dict(spec.eval_metric_ops)
            if "loss" not in metrics:
                metrics["loss"] = metrics_impl.mean(spec.loss)
            values = {k: v[0] for k, v in metrics.items()}
            values["global_step"] = global_step
            updates = [v[1] for v in metrics.values()]
            final = hooks_lib.FinalOpsHook(values)
            creator = monitored_session.ChiefSessionCreator(
                scaffold=spec.scaffold, master=self._config.evaluation_master,
                config=self._config.session_config,
                checkpoint_filename_with_path=checkpoint_path)
            done = 0
            with monitored_session.MonitoredSession(
                    creator, list(spec.evaluation_hooks) + list(hooks or []) + [final]) as session:
                while not session.should_stop():
                    session.run(updates)
                    done += 1
                    if steps is not None and done >= steps:
                        break
            results = dict(final.final_ops_values)
        logging.info("Saving dict for global step %d: %s", results["global_step"],
                     ", ".join("%s = %s" % (k, results[k]) for k in sorted(results)))
        self._write_eval_summary(self._eval_dir(name), results)
        return results

    def _write_eval_summary(self, directory, results):
        summary = summary_lib.Summary()
        for key, value in sorted(results.items()):
            if key == "global_step":
                continue
            array = np.asarray(value)
            if array.size == 1 and np.issubdtype(array.dtype, np.number):
                summary.value.add(tag=key, simple_value=float(array))
        writer = summary_writer.FileWriterCache.get(directory)
        writer.add_summary(summary, int(results["global_step"]))
        writer.flush()

    # ---- export ----
    def export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                           assets_extra=None, as_text=False, checkpoint_path=None,
                           experimental_mode=ModeKeys.PREDICT):
        """Writes a SavedModel (TensorFlow's format) of the model in PREDICT mode over the
        receiver's features, with the latest checkpoint's (or `checkpoint_path`'s) values,
        into a new export_dir_base/<timestamp>; returns that directory (bytes, as TF)."""
        from tensorweave.estimator import export as export_lib
        from tensorweave.saved_model import builder as builder_lib
        from tensorweave.saved_model import tag_constants
        if serving_input_receiver_fn is None:
            raise ValueError("An input_receiver_fn must be defined.")
        if experimental_mode != ModeKeys.PREDICT:
            raise NotImplementedError("export_saved_model exports the PREDICT mode only")
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if checkpoint_path is None:
            raise ValueError("Couldn't find trained model at %s." % self._model_dir)
        export_dir = _timestamped_dir(os.fspath(export_dir_base))
        temp_dir = os.path.join(os.path.dirname(export_dir),
                                "temp-" + os.path.basename(export_dir))
        with ops.Graph().as_default():
            if self._config.tf_random_seed is not None:
                ops.get_default_graph().seed = self._config.tf_random_seed
            training_util.get_or_create_global_step()
            receiver = serving_input_receiver_fn()
            with self._partitioning():
                spec = self._call_model_fn(receiver.features, None, ModeKeys.PREDICT)
            signatures = export_lib.build_all_signature_defs(
                receiver.receiver_tensors, spec.export_outputs, spec.predictions)
            saver = saver_lib.Saver(variables.global_variables(), allow_empty=True)
            with self._session() as session:
                saver.restore(session, checkpoint_path)
                builder = builder_lib.SavedModelBuilder(temp_dir)
                builder.add_meta_graph_and_variables(
                    session, [tag_constants.SERVING], signature_def_map=signatures,
                    saver=saver)
                builder.save(as_text)
        # assets_extra: {path under assets.extra: source file}, copied as TF copies them.
        for destination, source in (assets_extra or {}).items():
            target = os.path.join(temp_dir, "assets.extra", destination)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(source, target)
        os.rename(temp_dir, export_dir)
        logging.info("SavedModel written to: %s", export_dir)
        return export_dir.encode()

    export_savedmodel = export_saved_model

    def _session(self):
        from tensorweave.client import session as session_lib
        return session_lib.Session(config=self._config.session_config)

    # ---- predict ----
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """The predictions for each example of the input (or each batch, with
        yield_single_examples=False), as a generator."""
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if checkpoint_path is None:
            logging.info("Could not find trained model in model_dir: %s, running "
                         "initialization to predict.", self._model_dir)
        with ops.Graph().as_default():
            if self._config.tf_random_seed is not None:
                ops.get_default_graph().seed = self._config.tf_random_seed
            training_util.get_or_create_global_step()
            features, _ = self._call_input_fn(input_fn, ModeKeys.PREDICT)
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT)
            predictions = spec.predictions
            if predict_keys is not None:
                if not isinstance(predictions, dict):
                    raise ValueError("predict_keys argument is not valid in case of non-dict "
                                     "predictions.")
                keys = [predict_keys] if isinstance(predict_keys, str) else list(predict_keys)
                missing = [k for k in keys if k not in predictions]
                if missing:
                    raise ValueError("Expected to run at least one output from %s, provided "
                                     "%s." % (sorted(predictions), keys))
                predictions = {k: predictions[k] for k in keys}
            creator = monitored_session.ChiefSessionCreator(
                scaffold=spec.scaffold, config=self._config.session_config,
                checkpoint_filename_with_path=checkpoint_path)
            with monitored_session.MonitoredSession(
                    creator, list(spec.prediction_hooks) + list(hooks or [])) as session:
                while not session.should_stop():
                    batch = session.run(predictions)
                    if not yield_single_examples:
                        yield batch
                        continue
                    if isinstance(batch, dict):
                        size = len(next(iter(batch.values())))
                        for i in range(size):
                            yield {k: v[i] for k, v in batch.items()}
                    else:
                        for row in batch:
                            yield row
