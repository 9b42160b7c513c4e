"""The canned DNN estimators of TF 1.x: DNNClassifier and DNNRegressor, with TF's variable
names (dnn/hiddenlayer_N/kernel, dnn/logits/bias), its heads (softmax or sigmoid cross
entropy, squared error; losses reduced by tf.losses.compute_weighted_loss as
loss_reduction asks, summed over the batch by default as in TF 1.x), its eval metrics and
prediction keys, and its optimizers by name ('Adagrad' at 0.05 by default), with
weight_column (weighting the loss and the metrics, as TF's heads) and label_vocabulary
(string labels). input_layer_partitioner and batch_norm are not built yet (issue #32)."""

from tensorweave.estimator import estimator as estimator_lib
from tensorweave.estimator import model_fn as model_fn_lib

ModeKeys = model_fn_lib.ModeKeys
_LEARNING_RATE = 0.05


def _tf():
    import tensorweave.compat.v1 as tf  # the namespace this package is part of
    return tf


def _optimizer(optimizer, learning_rate=_LEARNING_RATE):
    tf = _tf()
    names = {"Adagrad": tf.train.AdagradOptimizer, "Adam": tf.train.AdamOptimizer,
             "RMSProp": tf.train.RMSPropOptimizer, "SGD": tf.train.GradientDescentOptimizer}
    if isinstance(optimizer, str):
        if optimizer not in names:
            raise ValueError("Unsupported optimizer name: %s. Supported names are: %s" %
                             (optimizer, sorted(names)))
        return names[optimizer](learning_rate=learning_rate)
    if callable(optimizer) and not isinstance(optimizer, tf.train.Optimizer):
        optimizer = optimizer()
    if not isinstance(optimizer, tf.train.Optimizer):
        raise ValueError("The given object is not an Optimizer instance. Given: %r" %
                         (optimizer,))
    return optimizer


def _logits(features, feature_columns, hidden_units, units, activation_fn, dropout, mode):
    tf = _tf()
    with tf.variable_scope("dnn"):
        with tf.variable_scope("input_from_feature_columns"):
            net = tf.feature_column.input_layer(features, feature_columns)
        for i, width in enumerate(hidden_units):
            net = tf.layers.dense(net, width, activation=activation_fn,
                                  kernel_initializer=tf.glorot_uniform_initializer(),
                                  name="hiddenlayer_%d" % i)
            if dropout is not None and mode == ModeKeys.TRAIN:
                net = tf.layers.dropout(net, rate=dropout, training=True)
        return tf.layers.dense(net, units, activation=None,
                               kernel_initializer=tf.glorot_uniform_initializer(),
                               name="logits")


def _weights(features, params):
    """The examples' weights ([batch, 1] float) from weight_column, or None."""
    column = params.get("weight_column")
    if column is None:
        return None
    tf = _tf()
    key = column if isinstance(column, str) else column.key
    if key not in features:
        raise ValueError("The weight feature %s is not in features dictionary." % key)
    return tf.reshape(tf.cast(features[key], tf.float32), [-1, 1])


def _spec(mode, loss_fn, predictions, metrics_fn, params, weights):
    """The EstimatorSpec of a head: predictions; the loss (weighted by `weights` when
    given) reduced as `loss_reduction` asks (TF 1.x's canned default: summed over the
    batch); metrics; a train op."""
    tf = _tf()
    if mode == ModeKeys.PREDICT:
        return model_fn_lib.EstimatorSpec(mode, predictions=predictions)
    unreduced = loss_fn()
    if weights is not None and unreduced.shape.ndims == 1:  # one loss per example
        weights = tf.reshape(weights, [-1])
    elif weights is not None:  # [batch, k]: each example's weight on its row
        weights = tf.ones_like(unreduced) * weights
    loss = tf.losses.compute_weighted_loss(unreduced, weights=1.0 if weights is None else weights,
                                           reduction=params["loss_reduction"])
    if mode == ModeKeys.EVAL:
        metrics = metrics_fn()
        metrics["average_loss"] = tf.metrics.mean(unreduced, weights=weights)
        return model_fn_lib.EstimatorSpec(mode, predictions=predictions, loss=loss,
                                          eval_metric_ops=metrics)
    tf.summary.scalar("loss", loss)
    train_op = _optimizer(params["optimizer"]).minimize(
        loss, global_step=tf.train.get_global_step())
    return model_fn_lib.EstimatorSpec(mode, predictions=predictions, loss=loss,
                                      train_op=train_op)


def _common_params(hidden_units, feature_columns, optimizer, activation_fn, dropout,
                   loss_reduction, weight_column=None, label_vocabulary=None,
                   input_layer_partitioner=None, batch_norm=False):
    """The settings both DNN estimators take, checked; the options not built yet say so."""
    if input_layer_partitioner is not None or batch_norm:
        raise NotImplementedError("input_layer_partitioner and batch_norm of the canned "
                                  "estimators are not in tensorweave yet (issue #32)")
    if weight_column is not None and not isinstance(weight_column, str) and not hasattr(
            weight_column, "normalizer_fn"):
        raise TypeError("Weight column must be either a string or _NumericColumn. "
                        "Given type: %s." % type(weight_column))
    if label_vocabulary is not None:
        if not isinstance(label_vocabulary, (list, tuple)) or not label_vocabulary:
            raise ValueError("label_vocabulary should be a list or a tuple. Given type: %s"
                             % type(label_vocabulary))
        if len(set(label_vocabulary)) != len(label_vocabulary):
            raise ValueError("label_vocabulary must not have duplicates: %s" %
                             (label_vocabulary,))
    tf = _tf()
    if isinstance(optimizer, str):
        _optimizer(optimizer)  # an unknown name is refused now, as TF's
    loss_reduction = tf.losses.Reduction.SUM if loss_reduction is None else loss_reduction
    if loss_reduction == tf.losses.Reduction.NONE:
        raise ValueError("Invalid loss_reduction: %s" % loss_reduction)
    tf.losses.Reduction.validate(loss_reduction)
    return {"hidden_units": list(hidden_units), "feature_columns": list(feature_columns),
            "optimizer": optimizer, "activation_fn": activation_fn or tf.nn.relu,
            "dropout": dropout, "loss_reduction": loss_reduction,
            "weight_column": weight_column,
            "label_vocabulary": list(label_vocabulary) if label_vocabulary else None}


def _classifier_fn(features, labels, mode, params):
    tf = _tf()
    n_classes = params["n_classes"]
    logits = _logits(features, params["feature_columns"], params["hidden_units"],
                     1 if n_classes == 2 else n_classes, params["activation_fn"],
                     params["dropout"], mode)
    vocabulary = params["label_vocabulary"]
    if vocabulary is not None and len(vocabulary) != n_classes:
        raise ValueError("label_vocabulary does not have n_classes elements: %d vs %d" %
                         (len(vocabulary), n_classes))
    names = tf.constant([(v if isinstance(v, bytes) else str(v).encode())
                         for v in (vocabulary or range(n_classes))])
    weights = _weights(features, params) if mode != ModeKeys.PREDICT else None
    if n_classes == 2:
        logistic = tf.sigmoid(logits)
        probabilities = tf.concat([1.0 - logistic, logistic], 1)
    else:
        probabilities = tf.nn.softmax(logits)
    class_ids = tf.expand_dims(tf.argmax(probabilities, 1), 1)
    predictions = {"logits": logits, "probabilities": probabilities, "class_ids": class_ids,
                   "classes": tf.gather(names, class_ids)}
    if n_classes == 2:
        predictions["logistic"] = logistic
    if labels is not None and vocabulary is not None:
        labels = _label_ids(labels, names, vocabulary)
    elif labels is not None:
        labels = tf.reshape(tf.cast(labels, tf.int64), [-1])
    flat_weights = None if weights is None else tf.reshape(weights, [-1])

    def loss_fn():
        if n_classes == 2:
            return tf.nn.sigmoid_cross_entropy_with_logits(
                labels=tf.cast(tf.reshape(labels, [-1, 1]), tf.float32), logits=logits)
        return tf.losses.sparse_softmax_cross_entropy(
            labels, logits, reduction=tf.losses.Reduction.NONE)

    def metrics_fn():
        w = flat_weights
        metrics = {"accuracy": tf.metrics.accuracy(labels, tf.reshape(class_ids, [-1]),
                                                   weights=w)}
        if n_classes == 2:
            as_float = tf.cast(labels, tf.float32)
            metrics.update({
                "auc": tf.metrics.auc(labels, tf.reshape(logistic, [-1]), weights=w),
                "precision": tf.metrics.precision(labels, tf.reshape(class_ids, [-1]),
                                                  weights=w),
                "recall": tf.metrics.recall(labels, tf.reshape(class_ids, [-1]), weights=w),
                "prediction/mean": tf.metrics.mean(tf.reshape(logistic, [-1]), weights=w),
                "label/mean": tf.metrics.mean(as_float, weights=w)})
        return metrics

    return _spec(mode, loss_fn, predictions, metrics_fn, params, weights)


def _label_ids(labels, names, vocabulary):
    """String labels as their index in label_vocabulary; a label outside it fails the
    step with InvalidArgument naming the vocabulary, as TF's head does."""
    tf = _tf()
    labels = tf.reshape(labels, [-1])
    if labels.dtype != tf.string:
        raise ValueError("Labels dtype should be string when label_vocabulary is given. "
                         "Given: %s" % labels.dtype.name)
    equal = tf.equal(tf.expand_dims(labels, -1), names)
    check = tf.assert_equal(tf.reduce_all(tf.reduce_any(equal, -1)), True, message=(
        "Labels must be in label_vocabulary %s" % (vocabulary,)))
    with tf.control_dependencies([check]):
        return tf.identity(tf.argmax(tf.cast(equal, tf.int32), -1))


def _regressor_fn(features, labels, mode, params):
    tf = _tf()
    logits = _logits(features, params["feature_columns"], params["hidden_units"],
                     params["label_dimension"], params["activation_fn"], params["dropout"],
                     mode)
    predictions = {"predictions": logits}
    weights = _weights(features, params) if mode != ModeKeys.PREDICT else None
    if labels is not None:
        labels = tf.reshape(tf.cast(labels, tf.float32), [-1, params["label_dimension"]])

    def loss_fn():
        return tf.square(labels - logits)

    def metrics_fn():
        w = None if weights is None else tf.ones_like(logits) * weights
        return {"prediction/mean": tf.metrics.mean(logits, weights=w),
                "label/mean": tf.metrics.mean(labels, weights=w)}

    return _spec(mode, loss_fn, predictions, metrics_fn, params, weights)


class DNNClassifier(estimator_lib.Estimator):
    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, optimizer="Adagrad",
                 activation_fn=None, dropout=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction=None, batch_norm=False):
        if n_classes < 2:
            raise ValueError("n_classes must be > 1 for classification: %s" % n_classes)
        params = _common_params(hidden_units, feature_columns, optimizer, activation_fn,
                                dropout, loss_reduction, weight_column, label_vocabulary,
                                input_layer_partitioner, batch_norm)
        params["n_classes"] = n_classes
        super().__init__(_classifier_fn, model_dir=model_dir, config=config, params=params,
                         warm_start_from=warm_start_from)


class DNNRegressor(estimator_lib.Estimator):
    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer="Adagrad", activation_fn=None, dropout=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None,
                 loss_reduction=None, batch_norm=False):
        params = _common_params(hidden_units, feature_columns, optimizer, activation_fn,
                                dropout, loss_reduction, weight_column, None,
                                input_layer_partitioner, batch_norm)
        params["label_dimension"] = label_dimension
        super().__init__(_regressor_fn, model_dir=model_dir, config=config, params=params,
                         warm_start_from=warm_start_from)
