"""TF 1.x's wide-and-deep estimators: DNNLinearCombinedClassifier and
DNNLinearCombinedRegressor. The logits are the sum of a linear model of
linear_feature_columns (variable scope "linear", FTRL by default) and a DNN of
dnn_feature_columns (scope "dnn", Adagrad by default); each part is trained by its own
optimizer on its own variables, and the global step advances once per step, as in TF."""

from tensorweave.estimator import estimator as estimator_lib
from tensorweave.estimator.canned import dnn as dnn_lib
from tensorweave.estimator.canned import head as head_lib
from tensorweave.estimator.canned import linear as linear_lib


def _tf():
    import tensorweave.compat.v1 as tf  # the namespace this package is part of
    return tf


def _model_fn(features, labels, mode, params):
    tf = _tf()
    parts = []
    if params.get("feature_columns"):
        parts.append(("dnn", dnn_lib.dnn_logits(features, params, mode),
                      lambda: head_lib.make_optimizer(params["optimizer"],
                                                      dnn_lib._LEARNING_RATE)))
    if params.get("linear_feature_columns"):
        rate = linear_lib.linear_learning_rate(len(params["linear_feature_columns"]))
        parts.append(("linear", linear_lib.linear_logits(features, params),
                      lambda: head_lib.make_optimizer(params["linear_optimizer"], rate)))
    logits = parts[0][1] if len(parts) == 1 else tf.add_n([p[1] for p in parts])

    def train_op_fn(loss):
        updates = []
        for scope, _, make in parts:
            variables = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope=scope)
            updates.append(make().minimize(loss, var_list=variables))
        with tf.control_dependencies(updates):
            return tf.assign_add(tf.train.get_global_step(), 1).op

    return head_lib.head_spec(features, labels, mode, params, logits, train_op_fn)


def _combined_params(linear_feature_columns, linear_optimizer, dnn_feature_columns,
                     dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout,
                     input_layer_partitioner, batch_norm, linear_sparse_combiner):
    linear_feature_columns = list(linear_feature_columns or [])
    dnn_feature_columns = list(dnn_feature_columns or [])
    if not linear_feature_columns and not dnn_feature_columns:
        raise ValueError("Either linear_feature_columns or dnn_feature_columns must be "
                         "defined.")
    if dnn_feature_columns and not dnn_hidden_units:
        raise ValueError("dnn_hidden_units must be defined when dnn_feature_columns is "
                         "specified. dnn_feature_columns: %s" % (dnn_feature_columns,))
    params = {}
    if dnn_feature_columns:
        params.update(dnn_lib.dnn_params(dnn_hidden_units, dnn_feature_columns, dnn_optimizer,
                                         dnn_activation_fn, dnn_dropout,
                                         input_layer_partitioner, batch_norm))
    if linear_feature_columns:
        params.update(linear_lib.linear_params(linear_feature_columns, linear_optimizer,
                                               linear_sparse_combiner))
    return params


class DNNLinearCombinedClassifier(estimator_lib.Estimator):
    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=None, dnn_dropout=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction=None, batch_norm=False,
                 linear_sparse_combiner="sum"):
        head_lib.check_classes(n_classes)
        params = _combined_params(linear_feature_columns, linear_optimizer,
                                  dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                                  dnn_activation_fn, dnn_dropout, input_layer_partitioner,
                                  batch_norm, linear_sparse_combiner)
        params.update(head_lib.head_params(loss_reduction, weight_column, label_vocabulary))
        params["n_classes"] = n_classes
        super().__init__(_model_fn, model_dir=model_dir, config=config, params=params,
                         warm_start_from=warm_start_from)


class DNNLinearCombinedRegressor(estimator_lib.Estimator):
    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=None, dnn_dropout=None, label_dimension=1,
                 weight_column=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction=None, batch_norm=False,
                 linear_sparse_combiner="sum"):
        params = _combined_params(linear_feature_columns, linear_optimizer,
                                  dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                                  dnn_activation_fn, dnn_dropout, input_layer_partitioner,
                                  batch_norm, linear_sparse_combiner)
        params.update(head_lib.head_params(loss_reduction, weight_column))
        params["label_dimension"] = label_dimension
        super().__init__(_model_fn, model_dir=model_dir, config=config, params=params,
                         warm_start_from=warm_start_from)
