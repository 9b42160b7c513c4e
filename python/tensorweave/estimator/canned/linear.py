"""The canned linear estimators of TF 1.x: LinearClassifier and LinearRegressor, a
linear_model of the feature columns under variable scope "linear"
(linear/linear_model/<column>/weights, linear/linear_model/bias_weights, as TF names
them) with TF's heads (head.py) and FTRL by default, at min(0.2, 1/sqrt(columns))."""

import math

from tensorweave.estimator import estimator as estimator_lib
from tensorweave.estimator.canned import head as head_lib

_LINEAR_LEARNING_RATE = 0.2


def _tf():
    import tensorweave.compat.v1 as tf  # the namespace this package is part of
    return tf


def linear_learning_rate(num_columns):
    """TF's default: 1/sqrt(number of columns), at most 0.2."""
    return min(_LINEAR_LEARNING_RATE, 1.0 / math.sqrt(num_columns))


def linear_logits(features, params):
    tf = _tf()
    partitioner = params.get("partitioner")
    with tf.variable_scope("linear", partitioner=partitioner):
        return tf.feature_column.linear_model(
            features, params["linear_feature_columns"],
            units=head_lib.logits_dimension(params),
            sparse_combiner=params["sparse_combiner"])


def linear_params(feature_columns, optimizer, sparse_combiner, partitioner=None):
    feature_columns = list(feature_columns)
    if not feature_columns:
        raise ValueError("feature_columns must not be empty.")
    if sparse_combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError("sparse_combiner must be one of 'mean', 'sqrtn' or 'sum'. Given: %s"
                         % sparse_combiner)
    if isinstance(optimizer, str):
        head_lib.make_optimizer(optimizer, 0.1)  # an unknown name: refused now
    return {"linear_feature_columns": feature_columns, "linear_optimizer": optimizer,
            "sparse_combiner": sparse_combiner, "partitioner": partitioner}


def _model_fn(features, labels, mode, params):
    tf = _tf()
    logits = linear_logits(features, params)

    def train_op_fn(loss):
        rate = linear_learning_rate(len(params["linear_feature_columns"]))
        return head_lib.make_optimizer(params["linear_optimizer"], rate).minimize(
            loss, global_step=tf.train.get_global_step())

    return head_lib.head_spec(features, labels, mode, params, logits, train_op_fn)


class LinearClassifier(estimator_lib.Estimator):
    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer="Ftrl", config=None, partitioner=None,
                 warm_start_from=None, loss_reduction=None, sparse_combiner="sum"):
        head_lib.check_classes(n_classes)
        params = linear_params(feature_columns, optimizer, sparse_combiner, partitioner)
        params.update(head_lib.head_params(loss_reduction, weight_column, label_vocabulary))
        params["n_classes"] = n_classes
        super().__init__(_model_fn, model_dir=model_dir, config=config, params=params,
                         warm_start_from=warm_start_from)


class LinearRegressor(estimator_lib.Estimator):
    def __init__(self, feature_columns, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer="Ftrl", config=None, partitioner=None, warm_start_from=None,
                 loss_reduction=None, sparse_combiner="sum"):
        params = linear_params(feature_columns, optimizer, sparse_combiner, partitioner)
        params.update(head_lib.head_params(loss_reduction, weight_column))
        params["label_dimension"] = label_dimension
        super().__init__(_model_fn, model_dir=model_dir, config=config, params=params,
                         warm_start_from=warm_start_from)
