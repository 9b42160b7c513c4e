"""tf.layers.dropout and the Dropout layer (tf.layers.Dropout, tf.keras.layers.Dropout in graph
mode): tf.nn.dropout while training, the inputs unchanged otherwise."""

from tensorweave import raw_ops
from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops import nn_activations


class Dropout:
    """Drops each input element with probability `rate` while training (scaling the kept ones
    by 1 / (1 - rate)). `training` is a Python bool or a bool tensor."""

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed
        self._name = name
        self.supports_masking = True

    @property
    def name(self):
        return self._name or "dropout"

    def __call__(self, inputs, training=False):
        # A keras layer's training=None is its learning phase, False outside fit().
        if training is None:
            training = False
        with ops.name_scope(self._name, "dropout", [inputs]):
            inputs = convert_to_tensor(inputs)
            if isinstance(training, bool):
                if not training:
                    return array_ops.identity(inputs)
                return self._dropped(inputs)
            # TF uses smart_cond (a tf.cond) on a training tensor; without a cond op both
            # branches are computed and a Select picks one (same values; the random draw
            # happens either way).
            training = convert_to_tensor(training)
            # Select's shape function merges its branches: the result keeps the input's shape.
            return raw_ops.Select(condition=training, t=self._dropped(inputs),
                                  e=array_ops.identity(inputs), name="Select")

    apply = __call__

    def _dropped(self, inputs):
        return nn_activations.dropout(inputs, noise_shape=self.noise_shape, seed=self.seed,
                                      rate=self.rate)

    # A layer without variables.
    weights = trainable_weights = trainable_variables = variables = property(lambda self: [])


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """tf.layers.dropout: Dropout(rate, noise_shape, seed, name).apply(inputs, training)."""
    return Dropout(rate, noise_shape=noise_shape, seed=seed, name=name).apply(
        inputs, training=training)
