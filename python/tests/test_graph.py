"""Graph construction: names, scopes, devices, control dependencies, collections, and the
errors TF 1.x raises at construction."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf
from tensorweave import raw_ops


def test_names_are_unique_case_insensitively_and_scoped():
    a = tf.constant(1, name="foo")
    b = tf.constant(1, name="foo")
    c = tf.constant(1, name="Foo")
    assert (a.op.name, b.op.name, c.op.name) == ("foo", "foo_1", "Foo_2")
    assert a.name == "foo:0"
    with tf.name_scope("outer") as scope:
        assert scope == "outer/"
        d = tf.constant(2)
        with tf.name_scope("inner"):
            e = tf.constant(3, name="e")
    assert (d.op.name, e.op.name) == ("outer/Const", "outer/inner/e")
    with tf.name_scope("outer"):  # a second scope of the same name is made unique
        assert tf.constant(4).op.name == "outer_1/Const"
    with tf.name_scope("outer/"):  # a trailing slash re-enters it
        assert tf.constant(4).op.name == "outer/Const_1"


def test_operators_name_their_ops_and_take_the_tensors_dtype():
    x = tf.placeholder(tf.float32, name="x")
    y = x + 1
    z = 2 * x
    assert y.op.type == "Add" and y.op.name == "add"
    assert z.op.type == "Mul" and z.dtype == tf.float32
    assert (x - 1).op.name == "sub" and (-x).op.type == "Neg"
    assert (x / 2).op.name == "truediv"
    i = tf.constant(3)
    with pytest.raises(TypeError, match="Expected int32, got 0.5 of type 'float' instead."):
        i * 0.5
    with pytest.raises(TypeError, match="Input 'y' of 'Add' Op has type float32 that does not "
                                        "match type int32 of argument 'x'."):
        i + tf.constant(1.0)


def test_tensors_are_hashable_by_identity_and_not_bools():
    x = tf.constant(1)
    y = tf.constant(1)
    assert len({x: 1, y: 2}) == 2
    with pytest.raises(TypeError, match="Using a `tf.Tensor` as a Python `bool`"):
        bool(x)
    with pytest.raises(TypeError, match="only iterable when eager"):
        iter(x)


def test_device_scopes_merge_innermost_first_and_none_resets():
    with tf.device("/job:worker"):
        with tf.device("/cpu:0"):
            a = tf.constant(1)
        with tf.device("/job:ps/task:1"):
            b = tf.constant(1)
        with tf.device(None):
            c = tf.constant(1)
        with tf.device(lambda op: "/job:ps/task:0" if op.type == "Const" else ""):
            d = tf.constant(1)
    assert a.device == "/job:worker/device:CPU:0"
    assert b.device == "/job:ps/task:1"
    assert c.device == ""
    assert d.device == "/job:ps/task:0"
    with pytest.raises(ValueError):
        with tf.device("/job:ps/task"):
            pass


def test_ops_that_use_a_resource_run_where_it_lives():
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="v")
    with tf.device("/job:worker/task:1"):
        update = v.assign_add(1.0)
        other = tf.constant(2.0)
    assert v.device == "/job:ps/task:0"
    assert update.device == "/job:ps/task:0"
    assert other.device == "/job:worker/task:1"


def test_colocate_with_takes_the_ops_device_and_ignores_device_functions():
    with tf.device("/job:ps/task:3"):
        a = tf.constant(1.0)
    with tf.device("/job:worker"), tf.colocate_with(a):
        b = tf.identity(a)
    assert b.device == "/job:ps/task:3"
    with pytest.raises(ValueError, match="ignore_existing is not True"):
        with tf.colocate_with(None):
            pass


def test_control_dependencies_nest_and_reset():
    a = tf.constant(1, name="a")
    b = tf.constant(2, name="b")
    with tf.control_dependencies([a]):
        with tf.control_dependencies([b.op]):
            c = tf.constant(3, name="c")
        with tf.control_dependencies(None):
            d = tf.constant(4, name="d")
        e = tf.identity(a, name="e")  # a is a data input: not a control input too
    assert c.op.control_inputs == [a.op, b.op]
    assert d.op.control_inputs == []
    assert e.op.control_inputs == []
    with pytest.raises(TypeError, match="Control input must be Operation or Tensor"):
        with tf.control_dependencies([1]):
            pass


def test_collections_and_graph_keys():
    v = tf.Variable(1.0, name="w")
    u = tf.Variable(1.0, name="u", trainable=False)
    assert tf.global_variables() == [v, u]
    assert tf.trainable_variables() == [v]
    tf.add_to_collection("mine", v)
    assert tf.get_collection("mine") == [v]
    assert tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="u") == [u]
    assert tf.GraphKeys.TRAINABLE_VARIABLES == "trainable_variables"


def test_variable_names_and_ops():
    v = tf.Variable([1.0, 2.0], name="v")
    assert v.name == "v:0" and v.op.name == "v"
    assert v.initializer.name == "v/Assign"
    assert v.value().op.name == "v/read"
    assert v.shape == tf.TensorShape([2])
    with pytest.raises(ValueError, match="initial_value must be specified."):
        tf.Variable()


def test_graphs_are_separate_and_default_graphs_nest():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1)
        assert tf.get_default_graph() is g
        with pytest.raises(AssertionError):
            tf.reset_default_graph()
    assert a.graph is g
    assert tf.get_default_graph() is not g
    b = tf.constant(2)
    with pytest.raises(ValueError, match="must be from the same graph"):
        tf.add(a, b)


def test_finalized_graph_refuses_ops():
    g = tf.get_default_graph()
    g.finalize()
    with pytest.raises(RuntimeError, match="Graph is finalized and cannot be modified."):
        tf.constant(1)


def test_a_refused_node_leaves_the_graph_usable():
    x = tf.constant([1.0, 2.0], name="x")
    with pytest.raises((TypeError, ValueError)):
        raw_ops.MatMul(a=x, b=tf.constant([1, 2]), name="bad")
    y = tf.identity(x, name="bad")  # the refused node's name is free
    assert y.op.name == "bad"
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(y), [1.0, 2.0])


def test_invalid_node_names_are_value_errors():
    with pytest.raises(ValueError, match="is not a valid node name"):
        tf.constant(1, name="_bad")


def test_every_registered_op_is_a_raw_op():
    from tensorweave.framework.op_def_library import OP_DEFS
    public = [name for name in OP_DEFS if not name.startswith("_")]
    assert len(public) > 80
    for name in public:
        assert callable(getattr(raw_ops, name)), name
    out = raw_ops.MatMul(a=[[1.0, 2.0]], b=[[3.0], [4.0]], transpose_a=False)
    with tf.Session() as s:
        assert s.run(out)[0][0] == 11.0


def test_constants_convert_as_tf_does():
    assert tf.constant(1).dtype == tf.int32
    assert tf.constant(2**40).dtype == tf.int64
    assert tf.constant(1.5).dtype == tf.float32
    assert tf.constant(np.float64(1.5)).dtype == tf.float64
    assert tf.constant(True).dtype == tf.bool
    assert tf.constant("s").dtype == tf.string
    assert tf.constant([[1, 2], [3, 4]]).shape == tf.TensorShape([2, 2])
    with pytest.raises(ValueError, match="None values not supported."):
        tf.constant(None)
    with pytest.raises(ValueError, match="dense"):
        tf.constant([[1, 2], [3]])


def test_static_shapes_come_from_the_builders_shape_functions():
    x = tf.placeholder(tf.float32, shape=[None, 784])
    w = tf.Variable(tf.zeros([784, 10]))
    logits = tf.matmul(x, w) + tf.zeros([10])
    assert logits.shape.as_list() == [None, 10]
    assert tf.reduce_sum(logits, axis=1).shape.as_list() == [None]
    assert tf.reshape(tf.zeros([2, 3]), [-1]).shape == tf.TensorShape([6])
    assert tf.placeholder(tf.float32).shape.ndims is None
    assert str(x.shape) == "(?, 784)"
    q = tf.FIFOQueue(5, [tf.int32], shapes=[[2]])
    assert q.dequeue_many(3).shape.as_list() == [3, 2]
    hidden = tf.matmul(x, w, name="hidden")
    with pytest.raises(ValueError, match=r"Dimensions must be equal, but are 10 and 784 for "
                                         r"'bad' \(op: 'MatMul'\) with input shapes: "
                                         r"\[\?,10\], \[784,10\]"):
        tf.matmul(hidden, w, name="bad")
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.constant([1, 2]) + tf.constant([1, 2, 3])
