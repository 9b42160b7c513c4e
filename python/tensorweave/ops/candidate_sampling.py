"""Sampled losses for large output layers: tf.nn.nce_loss and tf.nn.sampled_softmax_loss, and
the candidate samplers under them (the C++ ops of src/ops/candidate_sampler_ops.cc).

The losses are TF 1.x's graphs (nn_impl._compute_sampled_logits): the true classes' and the
sampled classes' rows of `weights` and `biases` looked up together (partitioned weights
too), their logits against `inputs`, accidental hits of a true class among the sampled
ones pushed to -FLT_MAX, and log Q (the expected counts) subtracted; NCE then scores each
logit with a sigmoid, the sampled softmax with one softmax over the true and sampled
classes."""

from tensorweave import raw_ops
from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops import array_transforms
from tensorweave.ops import index_ops
from tensorweave.ops import math_ops
from tensorweave.ops import nn_ops
from tensorweave.ops import partitioned_variables
from tensorweave.ops import random_ops


def _sampler(op_type, true_classes, num_true, num_sampled, unique, range_max, seed, name):
    seed1, seed2 = random_ops._seeds(seed)
    return tuple(getattr(raw_ops, op_type)(
        true_classes=math_ops.cast(true_classes, dtypes.int64), num_true=num_true,
        num_sampled=num_sampled, unique=unique, range_max=range_max, seed=seed1, seed2=seed2,
        name=name or op_type))


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                  seed=None, name=None):
    """(sampled_candidates, true_expected_count, sampled_expected_count): classes drawn with
    P(c) = (log(c + 2) - log(c + 1)) / log(range_max + 1)."""
    return _sampler("LogUniformCandidateSampler", true_classes, num_true, num_sampled, unique,
                    range_max, seed, name)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None,
                              name=None):
    """The same as log_uniform_candidate_sampler with every class equally likely."""
    return _sampler("UniformCandidateSampler", true_classes, num_true, num_sampled, unique,
                    range_max, seed, name)


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """(indices, ids, weights): for each sampled candidate that is a true class of row
    indices[i], its position ids[i] in sampled_candidates and weights[i] = -FLT_MAX."""
    return tuple(raw_ops.ComputeAccidentalHits(
        true_classes=math_ops.cast(true_classes, dtypes.int64),
        sampled_candidates=math_ops.cast(sampled_candidates, dtypes.int64), num_true=num_true,
        name=name or "ComputeAccidentalHits"))


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                            sampled_values, subtract_log_q, remove_accidental_hits,
                            partition_strategy, name, seed=None):
    """(logits [batch, num_true + num_sampled], labels of the same shape): TF's graph."""
    with ops.name_scope(name, "compute_sampled_logits"):
        labels = math_ops.cast(labels, dtypes.int64)
        labels_flat = array_ops.reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(
                true_classes=labels, num_true=num_true, num_sampled=num_sampled, unique=True,
                range_max=num_classes, seed=seed)
        sampled, true_expected_count, sampled_expected_count = (
            array_ops.stop_gradient(s) for s in sampled_values)
        sampled = math_ops.cast(sampled, dtypes.int64)

        # One lookup for the true and the sampled rows.
        all_ids = array_ops.concat([labels_flat, sampled], 0)
        all_w = partitioned_variables.embedding_lookup(weights, all_ids,
                                                       partition_strategy=partition_strategy)
        inputs = convert_to_tensor(inputs)
        if all_w.dtype != inputs.dtype:
            all_w = math_ops.cast(all_w, inputs.dtype)
        num_labels = array_ops.shape(labels_flat)[0]
        true_w = array_ops.slice(all_w, [0, 0], array_ops.stack([num_labels, -1]))
        sampled_w = array_ops.slice(all_w, array_ops.stack([num_labels, 0]), [-1, -1])
        sampled_logits = math_ops.matmul(inputs, sampled_w, transpose_b=True)

        all_b = partitioned_variables.embedding_lookup(biases, all_ids,
                                                       partition_strategy=partition_strategy)
        if all_b.dtype != inputs.dtype:
            all_b = math_ops.cast(all_b, inputs.dtype)
        true_b = array_ops.slice(all_b, [0], array_ops.reshape(num_labels, [1]))
        sampled_b = array_ops.slice(all_b, array_ops.reshape(num_labels, [1]), [-1])

        # The true logits: each input's dot product with its num_true rows.
        dim = array_ops.shape(true_w)[1:2]
        true_w = array_ops.reshape(true_w, array_ops.concat([[-1, num_true], dim], 0))
        row_wise_dots = math_ops.multiply(array_transforms.expand_dims(inputs, 1), true_w)
        true_logits = math_ops.reduce_sum(row_wise_dots, axis=2)
        true_logits = math_ops.add(true_logits, array_ops.reshape(true_b, [-1, num_true]))
        sampled_logits = math_ops.add(sampled_logits, sampled_b)

        if remove_accidental_hits:
            acc_indices, acc_ids, acc_weights = compute_accidental_hits(
                labels, sampled, num_true=num_true)
            hit_cells = array_ops.stack(
                [math_ops.cast(acc_indices, dtypes.int64), acc_ids], axis=1)
            logits_shape = math_ops.cast(array_ops.shape(sampled_logits), dtypes.int64)
            sampled_logits = math_ops.add(sampled_logits, index_ops.scatter_nd(
                hit_cells, math_ops.cast(acc_weights, sampled_logits.dtype), logits_shape))

        if subtract_log_q:
            true_logits = math_ops.subtract(
                true_logits, math_ops.log(math_ops.cast(true_expected_count, true_logits.dtype)))
            sampled_logits = math_ops.subtract(sampled_logits, math_ops.log(
                math_ops.cast(sampled_expected_count, sampled_logits.dtype)))

        out_logits = array_ops.concat([true_logits, sampled_logits], 1)
        out_labels = array_ops.concat(
            [math_ops.divide(array_ops.ones_like(true_logits), float(num_true)),
             array_ops.zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
             sampled_values=None, remove_accidental_hits=False, partition_strategy="mod",
             name="nce_loss"):
    """Noise-contrastive estimation: per example, the sigmoid cross-entropies of its true
    classes (label 1 / num_true) and of num_sampled sampled classes (label 0), summed.
    weights [num_classes, dim] (or its partitions), biases [num_classes], labels int
    [batch, num_true], inputs [batch, dim]; returns [batch]."""
    logits, labels = _compute_sampled_logits(
        weights=weights, biases=biases, labels=labels, inputs=inputs, num_sampled=num_sampled,
        num_classes=num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy, name=name)
    losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                      name="sampled_losses")
    return math_ops.reduce_sum(losses, axis=1)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                         sampled_values=None, remove_accidental_hits=True,
                         partition_strategy="mod", name="sampled_softmax_loss", seed=None):
    """The softmax cross-entropy over each example's true classes and num_sampled sampled
    classes, a cheap estimate of the full softmax's for training; returns [batch]."""
    logits, labels = _compute_sampled_logits(
        weights=weights, biases=biases, labels=labels, inputs=inputs, num_sampled=num_sampled,
        num_classes=num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy, name=name, seed=seed)
    labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
    return nn_ops.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
