"""Session.run: fetch structures, feeds and their checks, results, errors, lifecycle."""

import collections

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


def test_fetch_structures_come_back_in_their_shape():
    a = tf.constant(1.0, name="a")
    b = tf.constant([1, 2], name="b")
    Pair = collections.namedtuple("Pair", ["x", "y"])
    with tf.Session() as s:
        out = s.run({"a": a, "nested": [b, (a, "b:0")], "pair": Pair(a, b), "op": b.op})
    assert out["a"] == 1.0 and isinstance(out["a"], np.float32)
    np.testing.assert_array_equal(out["nested"][0], [1, 2])
    assert isinstance(out["nested"][1], tuple) and out["nested"][1][0] == 1.0
    np.testing.assert_array_equal(out["nested"][1][1], [1, 2])
    assert isinstance(out["pair"], Pair) and out["pair"].x == 1.0
    assert out["op"] is None
    with tf.Session() as s:
        assert s.run([]) == []


def test_fetch_errors():
    a = tf.constant(1.0)
    with tf.Session() as s:
        with pytest.raises(TypeError, match="Fetch argument None has invalid type"):
            s.run(None)
        with pytest.raises(TypeError, match="has invalid type"):
            s.run(3)
        with pytest.raises(ValueError, match="cannot be interpreted as a Tensor"):
            s.run("nope:0")
        other = tf.Graph()
        with other.as_default():
            c = tf.constant(2.0)
        with pytest.raises(ValueError, match="is not an element of this graph"):
            s.run(c)
        assert s.run(a) == 1.0


def test_feeds_are_converted_and_checked_before_the_step():
    x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
    y = tf.identity(x)
    u = tf.placeholder(tf.uint8, name="u")
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(y, {x: [[1, 2, 3]]}), [[1, 2, 3]])
        np.testing.assert_array_equal(s.run(y, {"x:0": np.ones((2, 3))}), np.ones((2, 3)))
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(3,\) for Tensor "
                                             r"'x:0', which has shape '\(\?, 3\)'"):
            s.run(y, {x: [1, 2, 3]})
        with pytest.raises(TypeError, match="Type of feed value 300 with type <class 'int'> is "
                                            "not compatible with Tensor type <class 'numpy.uint8'>"):
            s.run(u, {u: 300})
        with pytest.raises(TypeError, match="The value of a feed cannot be a tf.Tensor"):
            s.run(y, {x: tf.constant([[1.0, 2.0, 3.0]])})
        with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor"):
            s.run(y, {"x": [[1, 2, 3]]})


def test_a_fed_tensor_that_is_fetched_returns_the_fed_value():
    a = tf.constant(1.0)
    b = a + 1
    with tf.Session() as s:
        assert s.run([a, b], {a: 5.0}) == [5.0, 6.0]


def test_strings_feed_as_str_or_bytes_and_come_back_as_bytes():
    p = tf.placeholder(tf.string)
    with tf.Session() as s:
        assert s.run(tf.identity(p), {p: "héllo"}) == "héllo".encode()
        np.testing.assert_array_equal(s.run(tf.identity(p), {p: [b"a", "b"]}),
                                      np.array([b"a", b"b"], dtype=object))


def test_runtime_errors_have_tfs_classes_and_name_the_node():
    x = tf.placeholder(tf.float32, name="x")
    v = tf.Variable(1.0, name="v")
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            s.run(tf.identity(x))
        assert "x" in info.value.message
        assert info.value.error_code == tf.errors.INVALID_ARGUMENT
        assert info.value.op is x.op and info.value.node_def["name"] == "x"
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="Attempting to use uninitialized value v"):
            s.run(v)
        s.run(v.initializer)
        assert s.run(v) == 1.0
    assert issubclass(tf.errors.OutOfRangeError, tf.errors.OpError)


def test_timeout_in_run_options_and_config():
    q = tf.FIFOQueue(1, [tf.int32])
    take = q.dequeue()
    with tf.Session() as s:
        with pytest.raises(tf.errors.DeadlineExceededError):
            s.run(take, options=tf.RunOptions(timeout_in_ms=50))
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=50)) as s:
        with pytest.raises(tf.errors.DeadlineExceededError):
            s.run(take)


def test_lifecycle():
    with pytest.raises(RuntimeError, match="The Session graph is empty."):
        tf.Session().run([])  # an empty graph fails even with nothing to fetch
    a = tf.constant(1)
    s = tf.Session()
    s.close()
    s.close()  # idempotent
    with pytest.raises(RuntimeError, match="Attempted to use a closed Session."):
        s.run(a)
    with tf.Session() as s:
        assert tf.get_default_session() is s
        assert a.eval() == 1
        with pytest.raises(RuntimeError, match="not re-entrant"):
            with s:
                pass
    assert tf.get_default_session() is None
    with pytest.raises(ValueError, match="No default session is registered"):
        a.eval()
    with pytest.raises(TypeError):
        tf.Session(target=3)


def test_interactive_session_is_the_default():
    a = tf.constant(2)
    s = tf.InteractiveSession()
    try:
        assert a.eval() == 2
    finally:
        s.close()
    assert tf.get_default_session() is None
    g = tf.Graph()
    with g.as_default():
        b = tf.constant(3)
    s = tf.InteractiveSession(graph=g)
    assert tf.get_default_graph() is g and b.eval() == 3
    with tf.Session(graph=g) as inner:
        s.close()  # closing it under another default leaves that one in place
        assert tf.get_default_session() is inner
    assert tf.get_default_session() is None
    assert tf.get_default_graph() is not g


def test_math_and_nn_ops_compute_what_tf_computes():
    x = tf.constant([[1.0, -2.0], [3.0, 4.0]])
    w = tf.constant([[1.0], [2.0]])
    b = tf.constant([0.5])
    labels = tf.constant([1, 0], dtype=tf.int64)
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(tf.matmul(x, w)), [[-3.0], [11.0]])
        np.testing.assert_allclose(s.run(tf.matmul(x, w, transpose_a=True)), [[7.0], [6.0]])
        np.testing.assert_allclose(s.run(tf.nn.xw_plus_b(x, w, b)), [[-2.5], [11.5]])
        np.testing.assert_allclose(s.run(tf.nn.relu(x)), [[1.0, 0.0], [3.0, 4.0]])
        np.testing.assert_allclose(s.run(tf.reduce_sum(x)), 6.0)
        np.testing.assert_allclose(s.run(tf.reduce_sum(x, axis=1, keepdims=True)),
                                   [[-1.0], [7.0]])
        np.testing.assert_allclose(s.run(tf.reduce_mean(x, axis=0)), [2.0, 1.0])
        np.testing.assert_allclose(s.run(tf.reduce_max(x, axis=1)), [1.0, 4.0])
        np.testing.assert_array_equal(s.run(tf.argmax(x, axis=1)), [0, 1])
        np.testing.assert_allclose(s.run(tf.nn.softmax(x)).sum(axis=1), [1.0, 1.0], rtol=1e-6)
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x)
        expected = -np.log(np.exp([-2.0, 3.0]) / np.exp(np.array([[1.0, -2.0], [3.0, 4.0]]))
                           .sum(axis=1))
        np.testing.assert_allclose(s.run(loss), expected, rtol=1e-5)
        np.testing.assert_allclose(s.run(tf.clip_by_value(x, 0.0, 3.0)), [[1, 0], [3, 3]])
        np.testing.assert_allclose(s.run(x / 2), [[0.5, -1.0], [1.5, 2.0]])
        assert s.run(tf.constant(7) / 2) == 3.5  # ints divide as floats
        np.testing.assert_array_equal(s.run(tf.cast(x, tf.int32)), [[1, -2], [3, 4]])
        np.testing.assert_array_equal(s.run(tf.equal(x, 3.0)), [[False, False], [True, False]])
        np.testing.assert_array_equal(s.run(tf.concat([x, x], 0)).shape, (4, 2))
        np.testing.assert_array_equal(s.run(tf.reshape(x, [4])), [1.0, -2.0, 3.0, 4.0])
        np.testing.assert_array_equal(s.run(tf.gather(x, [1])), [[3.0, 4.0]])
        np.testing.assert_array_equal(s.run(tf.zeros([2, 2])), np.zeros((2, 2)))
        np.testing.assert_array_equal(s.run(tf.ones_like(x)), np.ones((2, 2)))
        np.testing.assert_array_equal(s.run(tf.fill([2], 7)), [7, 7])
        np.testing.assert_array_equal(s.run(x[1]), [3.0, 4.0])
        np.testing.assert_array_equal(s.run(x[0:1]), [[1.0, -2.0]])
        np.testing.assert_array_equal(s.run(x[:, 1]), [-2.0, 4.0])
        np.testing.assert_array_equal(s.run(x[-1, -1]), 4.0)
        np.testing.assert_array_equal(s.run(x[1:, :1]), [[3.0]])
        np.testing.assert_array_equal(s.run(x[:5]), [[1.0, -2.0], [3.0, 4.0]])
        assert s.run(tf.random_uniform([100], -1.0, 1.0)).min() >= -1.0
        assert s.run(tf.random_normal([3, 4])).shape == (3, 4)
        assert abs(s.run(tf.truncated_normal([1000], stddev=1.0))).max() <= 2.0


def test_fetched_arrays_own_their_memory_safely():
    v = tf.Variable(np.arange(4, dtype=np.float32), name="buf")
    with tf.Session() as s:
        s.run(v.initializer)
        first = s.run(v)
        first[0] = 100.0  # a copy: the variable is unchanged
        np.testing.assert_array_equal(s.run(v), [0.0, 1.0, 2.0, 3.0])


def test_fetching_a_variables_name_fetches_its_value():
    v = tf.Variable([1.0, 2.0], name="v")
    q = tf.FIFOQueue(1, [tf.int32])
    with tf.Session() as s:
        s.run(v.initializer)
        np.testing.assert_array_equal(s.run("v:0"), [1.0, 2.0])
        np.testing.assert_array_equal(s.run(v.name), [1.0, 2.0])
        with pytest.raises(ValueError, match="resource handle, which cannot be fetched"):
            s.run(q.queue_ref)  # refused before anything runs
        v.load([3.0, 4.0], s)
        np.testing.assert_array_equal(s.run(v), [3.0, 4.0])


def test_ops_go_to_their_inputs_graph_and_foreign_control_inputs_are_refused():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0, name="a")
    b = a + 1  # built in g, not in the default graph
    assert b.graph is g
    tf.constant(0.0, name="a")  # a node of the same name in the default graph
    with pytest.raises(ValueError, match="not an element of this graph"):
        with tf.control_dependencies([a]):
            pass


def test_names_ending_in_a_slash_are_used_once():
    tf.constant(1, name="foo/")
    with pytest.raises(ValueError, match="Duplicate node name in graph: 'foo'"):
        tf.constant(2, name="foo/")


def test_seeded_graphs_give_repeatable_but_distinct_random_ops():
    def draws():
        g = tf.Graph()
        with g.as_default():
            g.seed = 1
            a, b = tf.random_normal([3]), tf.random_normal([3])
            with tf.Session(graph=g) as s:
                return s.run([a, b])
    first, second = draws(), draws()
    np.testing.assert_array_equal(first[0], second[0])  # same seeds, same values
    assert not np.array_equal(first[0], first[1])  # two ops, two seeds


def test_placeholder_with_default_has_its_declared_shape():
    p = tf.placeholder_with_default(tf.constant([1.0, 2.0]), shape=[None])
    assert p.shape.as_list() == [None]
    y = p * 2.0
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(y), [2.0, 4.0])
        np.testing.assert_array_equal(s.run(y, {p: [1.0, 1.0, 1.0]}), [2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="not compatible with the declared shape"):
        tf.placeholder_with_default(tf.constant([1.0, 2.0, 3.0]), shape=[2])


def test_reductions_of_unknown_rank_and_large_fills():
    x = tf.placeholder(tf.float32)
    total = tf.reduce_sum(x)
    big = tf.zeros([100, 100])
    assert big.op.type == "Fill" and tf.zeros([2, 2]).op.type == "Const"
    with tf.Session() as s:
        assert s.run(total, {x: [[1.0, 2.0], [3.0, 4.0]]}) == 10.0
        assert s.run(tf.reduce_sum(big)) == 0.0
    assert tf.constant([1, 2], shape=[2], verify_shape=True).shape == tf.TensorShape([2])


def test_softmax_axes_and_cross_entropy_over_the_last_axis():
    logits = tf.constant(np.zeros((2, 3, 4), dtype=np.float32))
    labels = tf.constant(np.full((2, 3, 4), 0.25, dtype=np.float32))
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    assert loss.shape.as_list() == [2, 3]
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(loss), np.full((2, 3), np.log(4.0)), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="only the last axis"):
        tf.nn.softmax(logits, axis=0)
    assert tf.nn.softmax(logits, axis=2).shape.as_list() == [2, 3, 4]


def test_dtypes_refuse_none():
    with pytest.raises(TypeError):
        tf.as_dtype(None)
    assert tf.float32 != None  # noqa: E711 (the comparison is the test)
    assert not hasattr(tf, "float16")
