"""tf.estimator.export: what a serving graph takes (ServingInputReceiver and the receiver fn
builders) and gives (PredictOutput, ClassificationOutput, RegressionOutput), with TF 1.x's
checks and messages; Estimator.export_saved_model turns them into SignatureDefs."""

import collections

from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework import sparse_tensor
from tensorweave.platform import tf_logging as logging
from tensorweave.saved_model import signature_constants
from tensorweave.saved_model import signature_def_utils


def _as_dict(value, default_key, what):
    if value is None:
        raise ValueError("%s must be defined." % what)
    if not isinstance(value, dict):
        value = {default_key: value}
    for key, tensor in value.items():
        if not isinstance(key, str):
            raise ValueError("%s keys must be strings: %s." % (what, key))
        if not isinstance(tensor, (ops.Tensor, sparse_tensor.SparseTensor)):
            raise ValueError("%s must be a Tensor or SparseTensor: %s." % (what, tensor))
    return value


class ServingInputReceiver(collections.namedtuple(
        "ServingInputReceiver",
        ["features", "receiver_tensors", "receiver_tensors_alternatives"])):
    """The serving graph's input: `receiver_tensors` are what a request feeds, `features`
    what the model_fn gets from them."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        features = _as_dict(features, "feature", "feature")
        receiver_tensors = _as_dict(receiver_tensors, "input", "receiver_tensors")
        return super().__new__(cls, features, receiver_tensors,
                               dict(receiver_tensors_alternatives or {}))


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A receiver fn feeding placeholders shaped like `features` (a dict of tensors) with
    the batch dimension `default_batch_size`."""
    def serving_input_receiver_fn():
        from tensorweave.ops import array_ops
        receivers = {}
        for name, t in features.items():
            shape = [default_batch_size] + t.shape.as_list()[1:] if t.shape.ndims else None
            receivers[name] = array_ops.placeholder(t.dtype, shape, name=name)
        return ServingInputReceiver(receivers, receivers)
    return serving_input_receiver_fn


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """A receiver fn taking serialized tf.Examples ("examples") parsed by `feature_spec`."""
    def serving_input_receiver_fn():
        from tensorweave.ops import array_ops
        from tensorweave.ops import parsing_ops
        serialized = array_ops.placeholder(dtypes.string, [default_batch_size],
                                           name="input_example_tensor")
        features = parsing_ops.parse_example(serialized, feature_spec)
        return ServingInputReceiver(features, {"examples": serialized})
    return serving_input_receiver_fn


class ExportOutput:
    """What one signature of an exported model gives."""

    def as_signature_def(self, receiver_tensors):
        raise NotImplementedError


def _tensor_dict(outputs, what):
    if not isinstance(outputs, dict):
        outputs = {"output": outputs}
    for key, value in outputs.items():
        if not isinstance(value, ops.Tensor):
            raise ValueError("%s output value must be a Tensor; got %s." % (what, value))
    return outputs


class PredictOutput(ExportOutput):
    def __init__(self, outputs):
        self.outputs = _tensor_dict(outputs, "Prediction")

    def as_signature_def(self, receiver_tensors):
        return signature_def_utils.predict_signature_def(receiver_tensors, self.outputs)


def _single_string_input(receiver_tensors, what):
    if len(receiver_tensors) != 1:
        raise ValueError("%s input must be a single string Tensor; got %s" %
                         (what, receiver_tensors))
    examples = next(iter(receiver_tensors.values()))
    if examples.dtype.base_dtype != dtypes.string:
        raise ValueError("%s input must be a single string Tensor; got %s" %
                         (what, receiver_tensors))
    return examples


class ClassificationOutput(ExportOutput):
    def __init__(self, scores=None, classes=None):
        if scores is not None and not (isinstance(scores, ops.Tensor) and
                                       scores.dtype.is_floating):
            raise ValueError("Classification scores must be a float32 Tensor; got %s" % scores)
        if classes is not None and not (isinstance(classes, ops.Tensor) and
                                        classes.dtype.base_dtype == dtypes.string):
            raise ValueError("Classification classes must be a string Tensor; got %s" %
                             classes)
        if scores is None and classes is None:
            raise ValueError("At least one of scores and classes must be set.")
        self.scores = scores
        self.classes = classes

    def as_signature_def(self, receiver_tensors):
        examples = _single_string_input(receiver_tensors, "Classification")
        return signature_def_utils.classification_signature_def(examples, self.classes,
                                                                self.scores)


class RegressionOutput(ExportOutput):
    def __init__(self, value):
        if not (isinstance(value, ops.Tensor) and value.dtype.is_floating):
            raise ValueError("Regression output value must be a float32 Tensor; got %s" %
                             value)
        self.value = value

    def as_signature_def(self, receiver_tensors):
        examples = _single_string_input(receiver_tensors, "Regression")
        return signature_def_utils.regression_signature_def(examples, self.value)


def build_all_signature_defs(receiver_tensors, export_outputs, predictions):
    """The SignatureDefs of a serving graph, as TF's export does: each export output's
    (a predict output of `predictions` when the model_fn gave none); an output whose
    signature cannot take these receiver tensors (a classification of raw floats) is left
    out with a warning. ValueError when none is left."""
    if not export_outputs:
        export_outputs = {signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                          PredictOutput(predictions)}
    signatures = {}
    for key, output in sorted(export_outputs.items()):
        if not isinstance(output, ExportOutput):
            raise ValueError("export_outputs must be a dict of ExportOutput; got %r for %s"
                             % (output, key))
        try:
            signatures[key] = output.as_signature_def(receiver_tensors)
        except ValueError as e:
            logging.warning("Export includes no signature for %s: %s", key, e)
    if not signatures:
        raise ValueError("No valid signatures for this export: every export output was "
                         "left out (see the warnings above).")
    return signatures
