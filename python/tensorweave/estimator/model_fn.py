"""tf.estimator's ModeKeys and EstimatorSpec: what a model_fn returns for each mode, checked
as TF 1.x checks it (a loss and a train_op to train, a loss to evaluate, predictions to
predict; metrics as (value, update_op) pairs)."""

import collections

from tensorweave.framework import ops
from tensorweave.framework import sparse_tensor


class ModeKeys:
    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


_FIELDS = ["mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs",
           "training_chief_hooks", "training_hooks", "scaffold", "evaluation_hooks",
           "prediction_hooks"]


def _is_tensor(x):
    return isinstance(x, (ops.Tensor, sparse_tensor.SparseTensor))


class EstimatorSpec(collections.namedtuple("EstimatorSpec", _FIELDS)):
    """The ops and objects a model_fn gives the Estimator for one mode."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                export_outputs=None, training_chief_hooks=None, training_hooks=None,
                scaffold=None, evaluation_hooks=None, prediction_hooks=None):
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError("mode must be one of ModeKeys, got %r" % (mode,))
        if mode == ModeKeys.TRAIN and train_op is None:
            raise ValueError("Missing train_op.")
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL) and loss is None:
            raise ValueError("Missing loss.")
        if mode == ModeKeys.PREDICT and predictions is None:
            raise ValueError("Missing predictions.")
        if loss is not None:
            if not _is_tensor(loss):
                raise TypeError("loss must be Tensor, given: %r" % (loss,))
            if loss.shape.ndims not in (None, 0) and loss.shape.num_elements() != 1:
                raise ValueError("Loss must be scalar, given: %s" % (loss,))
        if predictions is not None:
            values = predictions.values() if isinstance(predictions, dict) else [predictions]
            if not all(_is_tensor(v) for v in values):
                raise TypeError("predictions must be Tensor or dict of Tensor, given: %r" %
                                (predictions,))
        metrics = dict(eval_metric_ops or {})
        for name, metric in metrics.items():
            if not (isinstance(metric, tuple) and len(metric) == 2):
                raise TypeError("Values of eval_metric_ops must be (metric_value, update_op) "
                                "tuples, given: %r for key: %s" % (metric, name))
        hooks = [list(h or []) for h in (training_chief_hooks, training_hooks,
                                         evaluation_hooks, prediction_hooks)]
        from tensorweave.training.session_run_hook import SessionRunHook
        for group in hooks:
            for hook in group:
                if not isinstance(hook, SessionRunHook):
                    raise TypeError("All hooks must be SessionRunHook instances, given: %r" %
                                    (hook,))
        return super().__new__(cls, mode, predictions, loss, train_op, metrics,
                               dict(export_outputs or {}), hooks[0], hooks[1], scaffold,
                               hooks[2], hooks[3])
