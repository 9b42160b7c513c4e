"""The canned DNN estimators of TF 1.x: DNNClassifier and DNNRegressor, with TF's variable
names (dnn/hiddenlayer_N/kernel, dnn/logits/bias), TF's heads (head.py) and its
optimizers by name ('Adagrad' at 0.05 by default), batch normalization after each hidden
layer (batch_norm, as TF: momentum 0.999, variables dnn/hiddenlayer_N/batchnorm_N/...) and
the input layer's partitioner (input_layer_partitioner)."""

from tensorweave.estimator import estimator as estimator_lib
from tensorweave.estimator.canned import head as head_lib

ModeKeys = head_lib.ModeKeys
_LEARNING_RATE = 0.05


def _tf():
    import tensorweave.compat.v1 as tf  # the namespace this package is part of
    return tf


def dnn_logits(features, params, mode):
    """The network's logits, under variable scope "dnn", as TF names its variables."""
    tf = _tf()
    with tf.variable_scope("dnn"):
        with tf.variable_scope("input_from_feature_columns",
                               partitioner=params["input_layer_partitioner"]):
            net = tf.feature_column.input_layer(features, params["feature_columns"])
        for i, width in enumerate(params["hidden_units"]):
            net = tf.layers.dense(net, width, activation=params["activation_fn"],
                                  kernel_initializer=tf.glorot_uniform_initializer(),
                                  name="hiddenlayer_%d" % i)
            if params["dropout"] is not None and mode == ModeKeys.TRAIN:
                net = tf.layers.dropout(net, rate=params["dropout"], training=True)
            if params["batch_norm"]:
                # TF's: 0.999, tf.contrib.layers' default (0.99 diverged on some problems);
                # the moving averages' updates go to UPDATE_OPS, which the head's train op
                # runs.
                with tf.variable_scope("hiddenlayer_%d" % i):
                    net = tf.layers.batch_normalization(
                        net, momentum=0.999, training=mode == ModeKeys.TRAIN,
                        name="batchnorm_%d" % i)
        return tf.layers.dense(net, head_lib.logits_dimension(params), activation=None,
                               kernel_initializer=tf.glorot_uniform_initializer(),
                               name="logits")


def dnn_params(hidden_units, feature_columns, optimizer, activation_fn, dropout,
               input_layer_partitioner=None, batch_norm=False):
    """The network's settings, checked."""
    if input_layer_partitioner is not None and not callable(input_layer_partitioner):
        raise TypeError("input_layer_partitioner must be a partitioner (callable), got %r" %
                        (input_layer_partitioner,))
    if isinstance(optimizer, str):
        head_lib.make_optimizer(optimizer, _LEARNING_RATE)  # an unknown name: refused now
    return {"hidden_units": list(hidden_units), "feature_columns": list(feature_columns),
            "optimizer": optimizer, "activation_fn": activation_fn or _tf().nn.relu,
            "dropout": dropout, "input_layer_partitioner": input_layer_partitioner,
            "batch_norm": bool(batch_norm)}


def _model_fn(features, labels, mode, params):
    tf = _tf()
    logits = dnn_logits(features, params, mode)

    def train_op_fn(loss):
        return head_lib.make_optimizer(params["optimizer"], _LEARNING_RATE).minimize(
            loss, global_step=tf.train.get_global_step())

    return head_lib.head_spec(features, labels, mode, params, logits, train_op_fn)


class DNNClassifier(estimator_lib.Estimator):
    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, optimizer="Adagrad",
                 activation_fn=None, dropout=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction=None, batch_norm=False):
        head_lib.check_classes(n_classes)
        params = dnn_params(hidden_units, feature_columns, optimizer, activation_fn, dropout,
                            input_layer_partitioner, batch_norm)
        params.update(head_lib.head_params(loss_reduction, weight_column, label_vocabulary))
        params["n_classes"] = n_classes
        super().__init__(_model_fn, model_dir=model_dir, config=config, params=params,
                         warm_start_from=warm_start_from)


class DNNRegressor(estimator_lib.Estimator):
    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer="Adagrad", activation_fn=None, dropout=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None,
                 loss_reduction=None, batch_norm=False):
        params = dnn_params(hidden_units, feature_columns, optimizer, activation_fn, dropout,
                            input_layer_partitioner, batch_norm)
        params.update(head_lib.head_params(loss_reduction, weight_column))
        params["label_dimension"] = label_dimension
        super().__init__(_model_fn, model_dir=model_dir, config=config, params=params,
                         warm_start_from=warm_start_from)
