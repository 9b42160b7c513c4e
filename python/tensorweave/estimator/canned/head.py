"""The heads of TF 1.x's canned estimators, shared by the DNN, linear and combined ones:
classification (sigmoid cross entropy for two classes, softmax otherwise) and regression
(squared error), losses reduced by tf.losses.compute_weighted_loss as loss_reduction asks
(summed over the batch by default, as in TF 1.x), weight_column weighting the loss and
every metric, label_vocabulary for string labels, TF's eval metric and prediction keys,
and optimizers by name."""

from tensorweave.estimator import export as export_lib
from tensorweave.estimator import model_fn as model_fn_lib
from tensorweave.saved_model.signature_constants import (
    DEFAULT_SERVING_SIGNATURE_DEF_KEY as DEFAULT_SERVING_KEY)

ModeKeys = model_fn_lib.ModeKeys


def _tf():
    import tensorweave.compat.v1 as tf  # the namespace this package is part of
    return tf


def make_optimizer(optimizer, learning_rate):
    """An optimizer given by name (made with `learning_rate`, TF's defaults per model),
    an Optimizer, or a callable returning one."""
    tf = _tf()
    names = {"Adagrad": tf.train.AdagradOptimizer, "Adam": tf.train.AdamOptimizer,
             "Ftrl": tf.train.FtrlOptimizer, "RMSProp": tf.train.RMSPropOptimizer,
             "SGD": tf.train.GradientDescentOptimizer}
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


def head_params(loss_reduction, weight_column=None, label_vocabulary=None):
    """The head's settings, checked as TF checks them."""
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
    loss_reduction = tf.losses.Reduction.SUM if loss_reduction is None else loss_reduction
    if loss_reduction == tf.losses.Reduction.NONE:
        raise ValueError("Invalid loss_reduction: %s" % loss_reduction)
    tf.losses.Reduction.validate(loss_reduction)
    return {"loss_reduction": loss_reduction, "weight_column": weight_column,
            "label_vocabulary": list(label_vocabulary) if label_vocabulary else None}


def check_classes(n_classes):
    if n_classes < 2:
        raise ValueError("n_classes must be > 1 for classification: %s" % n_classes)


def logits_dimension(params):
    """Units of a model's last layer: 1 for two classes, n_classes, or label_dimension."""
    if "n_classes" in params:
        return 1 if params["n_classes"] == 2 else params["n_classes"]
    return params["label_dimension"]


def head_spec(features, labels, mode, params, logits, train_op_fn):
    """classifier_spec or regressor_spec, as params say."""
    head = classifier_spec if "n_classes" in params else regressor_spec
    return head(features, labels, mode, params, logits, train_op_fn)


def example_weights(features, params):
    """The examples' weights ([batch, 1] float) from weight_column, or None."""
    column = params.get("weight_column")
    if column is None:
        return None
    tf = _tf()
    key = column if isinstance(column, str) else column.key
    if key not in features:
        raise ValueError("The weight feature %s is not in features dictionary." % key)
    return tf.reshape(tf.cast(features[key], tf.float32), [-1, 1])


def spec(mode, loss_fn, predictions, metrics_fn, params, weights, train_op_fn,
         export_outputs_fn=None):
    """The EstimatorSpec of a head: predictions (and, to predict, `export_outputs_fn()`'s
    signatures for export); the loss (weighted by `weights` when given) reduced as
    `loss_reduction` asks (TF 1.x's canned default: summed over the batch); metrics;
    `train_op_fn(loss)` for the train op."""
    tf = _tf()
    if mode == ModeKeys.PREDICT:
        return model_fn_lib.EstimatorSpec(
            mode, predictions=predictions,
            export_outputs=export_outputs_fn() if export_outputs_fn else None)
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
    train_op = train_op_fn(loss)
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    if update_ops:  # batch normalization's moving averages, as TF's heads append them
        train_op = tf.group(train_op, *update_ops)
    return model_fn_lib.EstimatorSpec(mode, predictions=predictions, loss=loss,
                                      train_op=train_op)


def classifier_spec(features, labels, mode, params, logits, train_op_fn):
    """TF's classification heads over `logits` ([batch, 1] for two classes, else
    [batch, n_classes]): sigmoid or softmax cross entropy, predictions, metrics."""
    tf = _tf()
    n_classes = params["n_classes"]
    vocabulary = params["label_vocabulary"]
    if vocabulary is not None and len(vocabulary) != n_classes:
        raise ValueError("label_vocabulary does not have n_classes elements: %d vs %d" %
                         (len(vocabulary), n_classes))
    names = tf.constant([(v if isinstance(v, bytes) else str(v).encode())
                         for v in (vocabulary or range(n_classes))])
    weights = example_weights(features, params) if mode != ModeKeys.PREDICT else None
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

    def export_outputs_fn():
        # TF's heads: the classes as strings, one row of every class per example, with
        # their scores; a binary head also regresses the logistic.
        classes = tf.tile(tf.expand_dims(names, 0), [tf.shape(probabilities)[0], 1])
        classify = export_lib.ClassificationOutput(scores=probabilities, classes=classes)
        outputs = {DEFAULT_SERVING_KEY: classify, "classification": classify,
                   "predict": export_lib.PredictOutput(predictions)}
        if n_classes == 2:
            outputs["regression"] = export_lib.RegressionOutput(value=logistic)
        return outputs

    return spec(mode, loss_fn, predictions, metrics_fn, params, weights, train_op_fn,
                export_outputs_fn)


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


def regressor_spec(features, labels, mode, params, logits, train_op_fn):
    """TF's regression head over `logits` ([batch, label_dimension]): squared error."""
    tf = _tf()
    predictions = {"predictions": logits}
    weights = example_weights(features, params) if mode != ModeKeys.PREDICT else None
    if labels is not None:
        labels = tf.reshape(tf.cast(labels, tf.float32), [-1, params["label_dimension"]])

    def loss_fn():
        return tf.square(labels - logits)

    def metrics_fn():
        w = None if weights is None else tf.ones_like(logits) * weights
        return {"prediction/mean": tf.metrics.mean(logits, weights=w),
                "label/mean": tf.metrics.mean(labels, weights=w)}

    def export_outputs_fn():
        regress = export_lib.RegressionOutput(value=logits)
        return {DEFAULT_SERVING_KEY: regress, "regression": regress,
                "predict": export_lib.PredictOutput(predictions)}

    return spec(mode, loss_fn, predictions, metrics_fn, params, weights, train_op_fn,
                export_outputs_fn)
