"""graph_util.convert_variables_to_constants: a trained graph frozen, then served alone."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


def _trained(sess):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable([[1.0], [2.0]], name="w")
    b = tf.Variable([0.5], name="b")
    y = tf.identity(tf.matmul(x, w) + b, name="y")
    loss = tf.reduce_sum(tf.square(y))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    sess.run(tf.global_variables_initializer())
    sess.run(train, {x: [[1.0, 1.0]]})
    return x, y


def test_a_frozen_graph_computes_what_the_trained_one_did_without_variables():
    with tf.Graph().as_default() as graph, tf.Session() as sess:
        x, y = _trained(sess)
        expected = sess.run(y, {x: [[3.0, -1.0]]})
        frozen = tf.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), ["y"])
    ops = {node.name: node.op for node in frozen.node}
    assert "Variable" not in ops.values() and "ApplyGradientDescent" not in ops.values()
    assert ops["w/read"] == "Const" and ops["b/read"] == "Const"
    with tf.Graph().as_default():
        y2, = tf.import_graph_def(frozen, name="", return_elements=["y:0"])
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y2, {"x:0": [[3.0, -1.0]]}), expected)


def test_whitelist_keeps_other_variables_and_bad_outputs_are_named():
    with tf.Graph().as_default() as graph, tf.Session() as sess:
        _trained(sess)
        graph_def = graph.as_graph_def()
        partly = tf.graph_util.convert_variables_to_constants(
            sess, graph_def, ["y"], variable_names_whitelist=["w"])
        ops = {node.name: node.op for node in partly.node}
        assert ops["w/read"] == "Const" and ops["b/read"] == "ReadVariable"
        assert ops["b"] == "Variable" and "w" not in ops
        with pytest.raises(AssertionError, match="nope is not in graph"):
            tf.graph_util.extract_sub_graph(graph_def, ["nope"])
