"""TF 1.x names that tensorweave does not have yet, each with the issue that brings it (or
LATER: known to be missing, no open issue yet).

A program that reaches one gets an AttributeError that says so ("tf.data is not in
tensorweave yet: issue #31 brings it (input pipelines ...)") instead of a bare "no
attribute", and never a wrong result. `attach` gives each `tf` namespace a module
__getattr__ (PEP 562) that looks names up here; anything else is the usual AttributeError."""

LATER = 0  # the "issue" of names no open issue brings yet
ISSUES = {
    LATER: "more of the op library than issue #30 brought",
    31: "input pipelines: tf.data, TF 1.x's queue-based readers and TFRecord files",
    33: "TensorFlow's own files: its checkpoints and SavedModels",
    34: "control flow: tf.cond, tf.while_loop and the recurrent networks",
}


def _names(issue, text):
    return {name: issue for name in text.split()}


# "namespace.name" (namespace "" for tf itself) -> issue.
COMING = {}
COMING.update(_names(LATER, """
    .image
    .reverse_sequence
    .sparse_placeholder
    .to_double .diag .eye .matrix_diag .einsum
    .tensordot .norm
    data.experimental.choose_from_datasets data.experimental.group_by_window
    data.experimental.scan data.experimental.rejection_resample
    .reduce_join strings.split strings.length strings.regex_replace strings.reduce_join .linspace .meshgrid .space_to_depth
    .depth_to_space .batch_to_space .space_to_batch .truncatediv .truncatemod
    contrib.metrics contrib.learn.Experiment contrib.learn.learn_runner
    nn.conv1d nn.conv3d
    nn.atrous_conv2d nn.max_pool_with_argmax
    nn.embedding_lookup_sparse
    nn.ctc_loss nn.pool nn.convolution
    layers.conv1d layers.conv3d layers.conv2d_transpose
    layers.separable_conv2d layers.max_pooling1d
    train.ExponentialMovingAverage
    train.AdadeltaOptimizer train.ProximalGradientDescentOptimizer
    train.ProximalAdagradOptimizer train.ProfilerHook
    summary.image summary.audio summary.text summary.tensor_summary
    distribute.Strategy distribute.MirroredStrategy distribute.MultiWorkerMirroredStrategy
    """))
COMING.update(_names(33, """
    saved_model.save
    """))
COMING.update(_names(34, """
    .cond .case .while_loop .map_fn .scan .foldl .foldr .TensorArray
    nn.dynamic_rnn nn.static_rnn nn.bidirectional_dynamic_rnn nn.rnn_cell
    contrib.rnn
    """))


def _lookup(namespace, name):
    return COMING.get((namespace or "") + "." + name if namespace else "." + name)


def attach(module, namespace):
    """Gives `module` (the tf namespace `namespace`, "" for tf itself) the __getattr__ that
    raises AttributeError naming the issue for a coming name."""
    display = "tf" + ("." + namespace if namespace else "")

    def __getattr__(name):
        issue = _lookup(namespace, name)
        if issue is None:
            raise AttributeError("module '%s' has no attribute '%s'" % (display, name))
        if issue == LATER:
            raise AttributeError("%s.%s is not in tensorweave yet, and no open issue brings "
                                 "it (%s)" % (display, name, ISSUES[issue]))
        raise AttributeError("%s.%s is not in tensorweave yet: issue #%d brings it (%s)" %
                             (display, name, issue, ISSUES[issue]))

    module.__getattr__ = __getattr__
