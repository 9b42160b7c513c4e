"""import_graph_def, export_meta_graph / import_meta_graph and write_graph: a graph and its
collections leave a program and come back in another graph, with its checkpoint."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


def _model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    b = tf.Variable([0.5, -0.5], name="b", trainable=False)
    y = tf.add(tf.matmul(x, w), b, name="y")
    step = tf.train.get_or_create_global_step()
    train = tf.assign_add(step, 1, name="train")
    tf.add_to_collection("outputs", y)
    tf.add_to_collection("train_op", train.op)
    tf.add_to_collection("labels", "cat")
    tf.add_to_collection("sizes", 7)
    return x, y, w, b


def test_a_model_and_its_checkpoint_come_back_through_a_meta_graph(tmp_path):
    prefix = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        x, y, w, b = _model()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(w.assign(w + 1.0))
            expected = sess.run(y, {x: [[1.0, 2.0, 3.0]]})
            saver.save(sess, prefix)
        meta = tf.train.export_meta_graph(prefix + ".meta")
        assert set(meta.collection_def) >= {"variables", "trainable_variables", "outputs",
                                            "train_op", "labels", "sizes", "global_step"}
    with tf.Graph().as_default():
        restorer = tf.train.import_meta_graph(prefix + ".meta")
        y = tf.get_collection("outputs")[0]
        assert y.name == "y:0" and y.shape.as_list() == [None, 2]
        assert tf.get_collection("labels") == [b"cat"]
        assert tf.get_collection("sizes") == [7]
        names = sorted(v.op.name for v in tf.global_variables())
        assert names == ["b", "global_step", "w"]
        assert [v.op.name for v in tf.trainable_variables()] == ["w"]
        # One Variable per variable, whatever collections hold it.
        assert tf.global_variables()[0] in tf.trainable_variables() or \
            tf.trainable_variables()[0] in tf.global_variables()
        with tf.Session() as sess:
            restorer.restore(sess, prefix)
            got = sess.run(y, {"x:0": [[1.0, 2.0, 3.0]]})
            np.testing.assert_allclose(got, expected)
            sess.run(tf.get_collection("train_op")[0])
            assert sess.run(tf.train.get_global_step()) == 1
            sess.run(tf.global_variables_initializer())  # the imported initializers run
            np.testing.assert_allclose(sess.run("w:0"),
                                       np.arange(6, dtype=np.float32).reshape(3, 2))


def test_import_graph_def_with_a_prefix_an_input_map_and_return_elements():
    with tf.Graph().as_default() as source:
        a = tf.placeholder(tf.float32, [2], name="a")
        tf.multiply(a, 3.0, name="tripled")
    graph_def = source.as_graph_def()
    assert [n.name for n in graph_def.node][0] == "a"
    with tf.Graph().as_default():
        fed = tf.constant([1.0, 2.0])
        tripled, = tf.import_graph_def(graph_def, input_map={"a:0": fed},
                                       return_elements=["tripled:0"])
        assert tripled.name == "import/tripled:0"
        again = tf.import_graph_def(graph_def, return_elements=["tripled"])[0]
        assert again.name == "import_1/tripled"
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(tripled), [3.0, 6.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="already exists"):
            tf.import_graph_def(graph_def, name="import_1/")
        with pytest.raises(TypeError, match="input_map"):
            tf.import_graph_def(graph_def, input_map={"a:0": [1.0, 2.0]})


def test_write_graph_as_text_and_binary_and_a_text_meta_graph(tmp_path):
    with tf.Graph().as_default() as graph:
        tf.constant(1.0, name="one")
        text = tf.train.write_graph(graph, str(tmp_path), "g.pbtxt")
        binary = tf.train.write_graph(graph.as_graph_def(), str(tmp_path), "g.pb",
                                      as_text=False)
        tf.train.export_meta_graph(str(tmp_path / "m.meta"), as_text=True)
    assert 'name: "one"' in open(text).read()
    parsed = tf.GraphDef()
    parsed.ParseFromString(open(binary, "rb").read())
    assert [n.op for n in parsed.node] == ["Const"]
    with tf.Graph().as_default():
        assert tf.train.import_meta_graph(str(tmp_path / "m.meta")) is None  # no variables
        assert tf.get_default_graph().get_operation_by_name("one").type == "Const"
    with pytest.raises(IOError, match="does not exist"):
        tf.train.import_meta_graph(str(tmp_path / "missing.meta"))
