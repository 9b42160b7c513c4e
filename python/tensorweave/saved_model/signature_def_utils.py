"""tf.saved_model.signature_def_utils: SignatureDefs as TF 1.x builds them, with its checks
and messages."""

from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.saved_model import signature_constants
from tensorweave.saved_model import utils


class SignatureDef:
    """TF's SignatureDef message, as a plain object: `inputs` and `outputs` map keys to
    TensorInfo; `method_name` says which serving API it is for."""

    def __init__(self, inputs=None, outputs=None, method_name=""):
        self.inputs = dict(inputs or {})
        self.outputs = dict(outputs or {})
        self.method_name = method_name

    def __repr__(self):
        return "SignatureDef(inputs=%r, outputs=%r, method_name=%r)" % (
            self.inputs, self.outputs, self.method_name)


def build_signature_def(inputs=None, outputs=None, method_name=None):
    return SignatureDef(inputs, outputs, method_name or "")


def predict_signature_def(inputs, outputs):
    if inputs is None or not inputs:
        raise ValueError("Prediction inputs cannot be None or empty.")
    if outputs is None or not outputs:
        raise ValueError("Prediction outputs cannot be None or empty.")
    return build_signature_def(
        {key: utils.build_tensor_info(t) for key, t in inputs.items()},
        {key: utils.build_tensor_info(t) for key, t in outputs.items()},
        signature_constants.PREDICT_METHOD_NAME)


def _is_string(tensor):
    return isinstance(tensor, ops.Tensor) and tensor.dtype.base_dtype == dtypes.string


def classification_signature_def(examples, classes, scores):
    if examples is None:
        raise ValueError("Classification examples cannot be None.")
    if not _is_string(examples):
        raise ValueError("Classification examples must be a string Tensor.")
    if classes is None and scores is None:
        raise ValueError("Classification classes and scores cannot both be None.")
    outputs = {}
    if classes is not None:
        if not _is_string(classes):
            raise ValueError("Classification classes must be a string Tensor.")
        outputs[signature_constants.CLASSIFY_OUTPUT_CLASSES] = utils.build_tensor_info(classes)
    if scores is not None:
        if not isinstance(scores, ops.Tensor) or not scores.dtype.is_floating:
            raise ValueError("Classification scores must be a float Tensor.")
        outputs[signature_constants.CLASSIFY_OUTPUT_SCORES] = utils.build_tensor_info(scores)
    return build_signature_def(
        {signature_constants.CLASSIFY_INPUTS: utils.build_tensor_info(examples)}, outputs,
        signature_constants.CLASSIFY_METHOD_NAME)


def regression_signature_def(examples, predictions):
    if examples is None:
        raise ValueError("Regression examples cannot be None.")
    if not _is_string(examples):
        raise ValueError("Regression examples must be a string Tensor.")
    if predictions is None:
        raise ValueError("Regression predictions cannot be None.")
    if not isinstance(predictions, ops.Tensor) or not predictions.dtype.is_floating:
        raise ValueError("Regression predictions must be a float Tensor.")
    return build_signature_def(
        {signature_constants.REGRESS_INPUTS: utils.build_tensor_info(examples)},
        {signature_constants.REGRESS_OUTPUTS: utils.build_tensor_info(predictions)},
        signature_constants.REGRESS_METHOD_NAME)


def is_valid_signature(signature_def):
    """TF's check: a SignatureDef with a method name and, for the three serving APIs, the
    inputs and outputs they need."""
    if signature_def is None or not signature_def.method_name:
        return False
    if not signature_def.inputs or not signature_def.outputs:
        return False
    return True
