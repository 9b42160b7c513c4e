"""tf.estimator exporters, which train_and_evaluate runs after each evaluation (EvalSpec's
exporters) into model_dir/export/<exporter name>/<timestamp>:

  LatestExporter  every evaluated checkpoint, keeping the newest `exports_to_keep`;
  FinalExporter   the last one only (the evaluation at max_steps);
  BestExporter    a checkpoint whose evaluation beats the best so far (`compare_fn`,
                  by default a smaller loss), keeping the newest `exports_to_keep`.

TF's BestExporter also reads the best result so far from model_dir's eval event files when
it starts; this one compares from its first evaluation in this process (after a restart the
first evaluation exports again: one export more, never one lost)."""

import os
import shutil

from tensorweave.platform import tf_logging as logging


class Exporter:
    """Exports a model after an evaluation: `name` is its directory under
    model_dir/export; export() returns the export's directory, or None."""

    @property
    def name(self):
        raise NotImplementedError

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        raise NotImplementedError


def _keep_newest(export_path, exports_to_keep):
    """Removes all but the newest `exports_to_keep` timestamped exports in export_path."""
    if exports_to_keep is None or not os.path.isdir(export_path):
        return
    stamps = sorted(int(name) for name in os.listdir(export_path) if name.isdigit())
    for stamp in stamps[:-exports_to_keep] if exports_to_keep > 0 else stamps:
        shutil.rmtree(os.path.join(export_path, str(stamp)), ignore_errors=True)
        logging.info("Removed old export %s", os.path.join(export_path, str(stamp)))


class _SavedModelExporter(Exporter):
    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False):
        if not name:
            raise ValueError("An Exporter needs a name.")
        self._name = name
        self._serving_input_receiver_fn = serving_input_receiver_fn
        self._assets_extra = assets_extra
        self._as_text = as_text

    @property
    def name(self):
        return self._name

    def _export(self, estimator, export_path, checkpoint_path):
        return estimator.export_saved_model(
            export_path, self._serving_input_receiver_fn, assets_extra=self._assets_extra,
            as_text=self._as_text, checkpoint_path=checkpoint_path)


class LatestExporter(_SavedModelExporter):
    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False,
                 exports_to_keep=5):
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        if exports_to_keep is not None and exports_to_keep <= 0:
            raise ValueError("`exports_to_keep`, if provided, must be positive number")
        self._exports_to_keep = exports_to_keep

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        path = self._export(estimator, export_path, checkpoint_path)
        _keep_newest(export_path, self._exports_to_keep)
        return path


class FinalExporter(_SavedModelExporter):
    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        if not is_the_final_export:
            return None
        logging.info("Performing the final export in the end of training.")
        return self._export(estimator, export_path, checkpoint_path)


def _loss_smaller(best_eval_result, current_eval_result):
    """TF's default compare_fn: True when the current evaluation's loss is smaller."""
    if not best_eval_result or "loss" not in best_eval_result:
        raise ValueError("best_eval_result cannot be empty or no loss is found in it.")
    if not current_eval_result or "loss" not in current_eval_result:
        raise ValueError("current_eval_result cannot be empty or no loss is found in it.")
    return best_eval_result["loss"] > current_eval_result["loss"]


class BestExporter(_SavedModelExporter):
    def __init__(self, name="best_exporter", serving_input_receiver_fn=None,
                 event_file_pattern="eval/*.tfevents.*", compare_fn=_loss_smaller,
                 assets_extra=None, as_text=False, exports_to_keep=5):
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        if compare_fn is None or not callable(compare_fn):
            raise ValueError("`compare_fn` must not be None.")
        if exports_to_keep is not None and exports_to_keep <= 0:
            raise ValueError("`exports_to_keep`, if provided, must be a positive number. "
                             "Got %s" % exports_to_keep)
        self._compare_fn = compare_fn
        self._exports_to_keep = exports_to_keep
        self._best_eval_result = None

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        if self._best_eval_result is not None and \
                not self._compare_fn(best_eval_result=self._best_eval_result,
                                     current_eval_result=eval_result):
            return None
        logging.info("Exporting a better model (%s instead of %s).", eval_result,
                     self._best_eval_result)
        self._best_eval_result = eval_result
        path = self._export(estimator, export_path, checkpoint_path)
        _keep_newest(export_path, self._exports_to_keep)
        return path
