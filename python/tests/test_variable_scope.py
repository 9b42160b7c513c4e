"""tf.get_variable, tf.variable_scope, the initializers and tf.layers.dense against TF 1.x's
documented behaviour (variable_scope_test.py, init_ops_test.py, core_test.py in TF 1.x)."""

import math

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


def _values(*tensors):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(tensors))


# ---- naming and sharing ----

def test_names_under_nested_scopes():
    with tf.variable_scope("foo"):
        with tf.variable_scope("bar"):
            v = tf.get_variable("v", [1])
        w = tf.get_variable("w", [2, 3])
    assert v.name == "foo/bar/v:0"
    assert v.op.name == "foo/bar/v"
    assert w.name == "foo/w:0"
    assert w.shape.as_list() == [2, 3]
    assert tf.get_variable_scope().name == ""
    assert set(tf.trainable_variables()) == {v, w}


def test_reuse_true_finds_the_same_variable():
    with tf.variable_scope("foo"):
        v = tf.get_variable("v", [1])
    with tf.variable_scope("foo", reuse=True):
        v1 = tf.get_variable("v", [1])
        v2 = tf.get_variable("v")  # the shape may be left out when reusing
    assert v1 is v
    assert v2 is v
    assert len(tf.global_variables()) == 1


def test_reuse_variables_and_inheritance():
    with tf.variable_scope("foo") as scope:
        v = tf.get_variable("v", [1])
        scope.reuse_variables()
        assert tf.get_variable("v", [1]) is v
        with tf.variable_scope("inner"):
            assert tf.get_variable_scope().reuse  # inherited by sub-scopes
        # reuse=False does not turn reuse off inside a reusing scope.
        with tf.variable_scope("other", reuse=False):
            assert tf.get_variable_scope().reuse


def test_reuse_errors():
    with tf.variable_scope("foo"):
        tf.get_variable("v", [1])
    with pytest.raises(ValueError, match="Variable foo/v already exists, disallowed. Did "
                                         "you mean to set reuse=True or reuse=tf.AUTO_REUSE "
                                         "in VarScope?"):
        with tf.variable_scope("foo"):
            tf.get_variable("v", [1])
    with pytest.raises(ValueError, match="Variable foo/w does not exist, or was not created "
                                         "with tf.get_variable\\(\\). Did you mean to set "
                                         "reuse=tf.AUTO_REUSE in VarScope?"):
        with tf.variable_scope("foo", reuse=True):
            tf.get_variable("w", [1])
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        with tf.variable_scope(None, default_name="d", reuse=True):
            pass


def test_auto_reuse():
    def make():
        with tf.variable_scope("model", reuse=tf.AUTO_REUSE):
            return tf.get_variable("w", [2])

    a, b = make(), make()
    assert a is b
    assert len(tf.global_variables()) == 1
    with tf.variable_scope("s", reuse=tf.AUTO_REUSE):
        with tf.variable_scope("inner"):
            c = tf.get_variable("c", [1])
            assert tf.get_variable("c", [1]) is c


def test_shape_and_dtype_mismatch_on_reuse():
    with tf.variable_scope("foo"):
        tf.get_variable("v", [1])
    with tf.variable_scope("foo", reuse=True):
        with pytest.raises(ValueError, match="Trying to share variable foo/v, but specified "
                                             "shape \\(2,\\) and found shape \\(1,\\)."):
            tf.get_variable("v", [2])
        with pytest.raises(ValueError, match="Trying to share variable foo/v, but specified "
                                             "dtype int32 and found dtype float32."):
            tf.get_variable("v", [1], dtype=tf.int32)


def test_captured_scope_keeps_its_name():
    with tf.variable_scope("outer") as outer:
        pass
    with tf.variable_scope("elsewhere"):
        with tf.variable_scope(outer):
            v = tf.get_variable("v", [1])
        with tf.variable_scope(outer, reuse=True):
            assert tf.get_variable("v", [1]) is v
    assert v.name == "outer/v:0"


def test_captured_scope_keeps_its_own_reuse():
    with tf.variable_scope("a") as a_scope:
        pass
    with tf.variable_scope("b", reuse=True):
        # TF: a captured scope keeps its own reuse; the outer reuse is not inherited.
        with tf.variable_scope(a_scope):
            assert not tf.get_variable_scope().reuse
            tf.get_variable("x", [1])
    assert [v.name for v in tf.global_variables()] == ["a/x:0"]


def test_scope_initializer_inheritance():
    with tf.variable_scope("s", initializer=tf.constant_initializer(0.4)):
        a = tf.get_variable("a", [2])
        with tf.variable_scope("inner"):
            b = tf.get_variable("b", [1])
        with tf.variable_scope("other", initializer=tf.constant_initializer(0.7)):
            c = tf.get_variable("c", [1])
        d = tf.get_variable("d", [1], initializer=tf.constant_initializer(0.1))
    e = tf.get_variable("e", [1], initializer=tf.zeros_initializer())
    values = _values(a, b, c, d, e)
    np.testing.assert_allclose(values[0], [0.4, 0.4])
    np.testing.assert_allclose(values[1], [0.4])
    np.testing.assert_allclose(values[2], [0.7])
    np.testing.assert_allclose(values[3], [0.1])
    np.testing.assert_allclose(values[4], [0.0])


def test_scope_dtype_inheritance():
    with tf.variable_scope("s", dtype=tf.float64):
        v = tf.get_variable("v", [1])
        with tf.variable_scope("inner"):
            w = tf.get_variable("w", [1])
    assert v.dtype.base_dtype == tf.float64
    assert w.dtype.base_dtype == tf.float64


def test_default_initializers():
    fan_in, fan_out = 30, 50
    w = tf.get_variable("w", [fan_in, fan_out])
    i = tf.get_variable("i", [4], dtype=tf.int32)
    b = tf.get_variable("b", [3], dtype=tf.bool)
    wv, iv, bv = _values(w, i, b)
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    assert wv.dtype == np.float32
    assert np.all(np.abs(wv) <= limit)
    assert wv.std() > limit / 4  # not all zeros
    np.testing.assert_array_equal(iv, [0, 0, 0, 0])
    np.testing.assert_array_equal(bv, [False, False, False])
    with pytest.raises(ValueError, match="An initializer for variable s of .*string.* is "
                                         "required"):
        tf.get_variable("s", [1], dtype=tf.string)


def test_initializer_values_and_classes():
    a = tf.get_variable("a", initializer=tf.constant([1, 2, 3]))
    b = tf.get_variable("b", initializer=np.array([1.5, 2.5], np.float32))
    c = tf.get_variable("c", [2], initializer=tf.ones_initializer)  # a class is instantiated
    assert a.dtype.base_dtype == tf.int32  # the value's dtype
    assert a.shape.as_list() == [3]
    values = _values(a, b, c)
    np.testing.assert_array_equal(values[0], [1, 2, 3])
    np.testing.assert_array_equal(values[1], [1.5, 2.5])
    np.testing.assert_array_equal(values[2], [1.0, 1.0])
    with pytest.raises(ValueError, match="If initializer is a constant, do not specify "
                                         "shape."):
        tf.get_variable("d", [3], initializer=tf.constant([1.0, 2.0, 3.0]))


def test_new_variable_needs_a_shape():
    with pytest.raises(ValueError, match="must be fully defined"):
        tf.get_variable("v")
    with pytest.raises(ValueError, match="must be fully defined"):
        tf.get_variable("w", [None, 3])


def test_trainable_and_collections():
    v = tf.get_variable("v", [1], trainable=False)
    local = tf.get_variable("l", [1], collections=[tf.GraphKeys.LOCAL_VARIABLES])
    assert v in tf.global_variables()
    assert v not in tf.trainable_variables()
    assert local in tf.local_variables()
    assert local not in tf.global_variables()


def test_regularizer_losses():
    with tf.variable_scope("s", regularizer=lambda w: tf.reduce_sum(w) * 0.5):
        v = tf.get_variable("v", [2], initializer=tf.ones_initializer())
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 1
    assert _values(losses[0])[0] == 1.0
    assert v.name == "s/v:0"


# ---- default names and name scopes ----

def test_default_name_uniquification():
    names = []
    for _ in range(3):
        with tf.variable_scope(None, default_name="dense") as scope:
            names.append(scope.name)
            tf.get_variable("kernel", [1])
    assert names == ["dense", "dense_1", "dense_2"]
    # A scope opened by name counts too.
    with tf.variable_scope("layer"):
        pass
    with tf.variable_scope(None, default_name="layer") as scope:
        assert scope.name == "layer_1"


def test_default_names_start_again_in_a_reopened_scope():
    # The TF idiom for sharing a model built from default-named pieces: the second build
    # in the reopened (reusing) scope gets the same names.
    def build():
        with tf.variable_scope(None, default_name="block"):
            first = tf.get_variable("w", [1])
        with tf.variable_scope(None, default_name="block"):
            second = tf.get_variable("w", [1])
        return first, second

    with tf.variable_scope("model"):
        a = build()
    with tf.variable_scope("model", reuse=True):
        b = build()
    assert [v.name for v in a] == ["model/block/w:0", "model/block_1/w:0"]
    assert b[0] is a[0] and b[1] is a[1]


def test_name_scopes_of_ops_in_a_reopened_scope():
    with tf.variable_scope("foo") as foo:
        a = tf.constant(1.0, name="a")
        v = tf.get_variable("v", [1])
        assert foo.original_name_scope == "foo/"
    with tf.variable_scope("foo", reuse=True):
        b = tf.constant(1.0, name="b")
        assert tf.get_variable("v", [1]) is v
    with tf.variable_scope(foo):  # re-entering a captured scope acts like another "foo"
        c = tf.constant(1.0, name="c")
        w = tf.get_variable("w", [1])
    assert a.op.name == "foo/a"
    assert b.op.name == "foo_1/b"
    assert c.op.name == "foo_2/c"
    assert w.name == "foo/w:0"  # variables keep the variable scope's name
    assert foo.original_name_scope == "foo/"


def test_name_scope_of_a_captured_scope_inside_another():
    with tf.name_scope("top"):
        with tf.variable_scope("tower") as tower:
            with tf.name_scope("scope2") as sc2:
                assert sc2 == "top/tower/scope2/"
        with tf.variable_scope(tower):
            with tf.name_scope("scope2") as sc2:
                assert sc2 == "top/tower_1/scope2/"
    with tf.name_scope("other"):
        with tf.variable_scope(tower):
            with tf.name_scope("scope2") as sc2:
                assert sc2 == "other/tower/scope2/"


def test_auxiliary_name_scope_false():
    with tf.variable_scope("x", auxiliary_name_scope=False):
        c = tf.constant(1.0, name="c")
        v = tf.get_variable("v", [1])
    assert c.op.name == "c"
    assert v.name == "x/v:0"


def test_a_new_graph_starts_at_the_root_scope():
    with tf.variable_scope("outer"):
        with tf.Graph().as_default():
            assert tf.get_variable_scope().name == ""
            v = tf.get_variable("v", [1])
            assert v.name == "v:0"
        assert tf.get_variable_scope().name == "outer"


def test_variable_scope_arguments():
    with pytest.raises(TypeError, match="If default_name is None then name_or_scope is "
                                        "required"):
        with tf.variable_scope(None):
            pass


# ---- initializers ----

def _sample(initializer, shape, dtype=tf.float32):
    return _values(initializer(shape, dtype=dtype))[0]


def test_zeros_ones_constant():
    np.testing.assert_array_equal(_sample(tf.zeros_initializer(), [2, 3]), np.zeros([2, 3]))
    np.testing.assert_array_equal(_sample(tf.ones_initializer(), [2], tf.int32), [1, 1])
    np.testing.assert_allclose(_sample(tf.constant_initializer(2.5), [2, 2]),
                               np.full([2, 2], 2.5))
    np.testing.assert_array_equal(_sample(tf.constant_initializer([1, 2, 3, 4]), [2, 2]),
                                  [[1, 2], [3, 4]])
    assert _sample(tf.ones_initializer(), [2], tf.int32).dtype == np.int32


def test_constant_initializer_pads_with_its_last_element():
    value = [0, 1, 2, 3, 4, 5, 6, 7]
    np.testing.assert_array_equal(_sample(tf.constant_initializer(value), [3, 4]),
                                  [[0, 1, 2, 3], [4, 5, 6, 7], [7, 7, 7, 7]])
    with pytest.raises(ValueError, match="Too many elements provided. Needed at most 6, "
                                         "but received 8"):
        tf.constant_initializer(value)([2, 3])
    with pytest.raises(TypeError, match="Expected Tensor's shape: \\(3, 4\\), got \\(8,\\)."):
        tf.constant_initializer(value, verify_shape=True)([3, 4])


def test_random_uniform_bounds():
    x = _sample(tf.random_uniform_initializer(-0.5, 0.25), [2000])
    assert x.min() >= -0.5 and x.max() < 0.25
    assert x.min() < -0.4 and x.max() > 0.15  # the range is covered
    default = _sample(tf.random_uniform_initializer(), [1000])  # [0, 1)
    assert default.min() >= 0.0 and default.max() < 1.0


def test_random_normal_moments():
    x = _sample(tf.random_normal_initializer(mean=1.0, stddev=2.0), [20000])
    assert abs(x.mean() - 1.0) < 0.1
    assert abs(x.std() - 2.0) < 0.1


def test_truncated_normal_within_two_stddev():
    x = _sample(tf.truncated_normal_initializer(mean=0.5, stddev=0.1), [10000])
    assert np.all(np.abs(x - 0.5) <= 0.2 + 1e-6)
    assert abs(x.mean() - 0.5) < 0.01


@pytest.mark.parametrize("distribution", ["truncated_normal", "untruncated_normal",
                                          "uniform", "normal"])
def test_variance_scaling_variance(distribution):
    shape = [400, 600]
    init = tf.variance_scaling_initializer(scale=2.0, mode="fan_in",
                                           distribution=distribution)
    x = _sample(init, shape)
    expected = 2.0 / 400
    assert abs(x.var() / expected - 1.0) < 0.05
    assert abs(x.mean()) < 0.01
    if distribution == "uniform":
        assert np.all(np.abs(x) <= math.sqrt(3 * expected) + 1e-6)


@pytest.mark.parametrize("mode,n", [("fan_in", 3 * 3 * 16), ("fan_out", 3 * 3 * 32),
                                    ("fan_avg", 3 * 3 * 24)])
def test_variance_scaling_fans_of_a_conv_kernel(mode, n):
    x = _sample(tf.variance_scaling_initializer(1.0, mode=mode, distribution="uniform"),
                [3, 3, 16, 32])
    limit = math.sqrt(3.0 / n)
    assert np.all(np.abs(x) <= limit + 1e-6)
    assert np.abs(x).max() > 0.9 * limit


def test_variance_scaling_arguments():
    with pytest.raises(ValueError, match="`scale` must be positive float."):
        tf.variance_scaling_initializer(scale=0.0)
    with pytest.raises(ValueError, match="Invalid `mode` argument:"):
        tf.variance_scaling_initializer(mode="fan_sideways")
    with pytest.raises(ValueError, match="Invalid `distribution` argument:"):
        tf.variance_scaling_initializer(distribution="cauchy")


def test_glorot_uniform_bounds():
    x = _sample(tf.glorot_uniform_initializer(), [20, 80])
    limit = math.sqrt(6.0 / 100)
    assert np.all(np.abs(x) <= limit)
    assert np.abs(x).max() > 0.9 * limit


def test_initializers_namespace():
    assert tf.initializers.zeros is tf.zeros_initializer
    x = _sample(tf.initializers.he_uniform(), [50, 10])
    assert np.all(np.abs(x) <= math.sqrt(6.0 / 50) + 1e-6)


# ---- tf.layers.dense ----

def test_dense_variables_and_values():
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    y = tf.layers.dense(x, 2, kernel_initializer=tf.constant_initializer(
        [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), bias_initializer=tf.constant_initializer(0.5))
    names = [v.name for v in tf.trainable_variables()]
    assert names == ["dense/kernel:0", "dense/bias:0"]
    assert y.shape.as_list() == [2, 2]
    assert y.op.name.startswith("dense/")
    (yv,) = _values(y)
    k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    np.testing.assert_allclose(yv, np.array([[1, 2, 3], [4, 5, 6]]) @ k + 0.5)


def test_dense_default_initializers_and_names():
    x = tf.placeholder(tf.float32, [None, 4])
    y1 = tf.layers.dense(x, 3)
    y2 = tf.layers.dense(y1, 5, activation=tf.nn.relu)
    names = [v.name for v in tf.trainable_variables()]
    assert names == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0"]
    assert y2.shape.as_list() == [None, 5]
    kernel, bias = tf.trainable_variables()[:2]
    kv, bv = _values(kernel, bias)
    assert np.all(np.abs(kv) <= math.sqrt(6.0 / 7))  # glorot_uniform
    np.testing.assert_array_equal(bv, np.zeros(3))   # zeros


def test_dense_activation_and_no_bias():
    x = tf.constant([[1.0, -2.0]])
    y = tf.layers.dense(x, 2, activation=tf.nn.relu, use_bias=False,
                        kernel_initializer=tf.constant_initializer([[1.0, -1.0], [1.0, -1.0]]))
    assert [v.name for v in tf.trainable_variables()] == ["dense/kernel:0"]
    (yv,) = _values(y)
    np.testing.assert_allclose(yv, [[0.0, 1.0]])  # relu([-1, 1])


def test_dense_reuse_by_name():
    x = tf.placeholder(tf.float32, [None, 3])
    y1 = tf.layers.dense(x, 2, name="shared")
    y2 = tf.layers.dense(x, 2, name="shared", reuse=True)
    assert [v.name for v in tf.trainable_variables()] == ["shared/kernel:0", "shared/bias:0"]
    with pytest.raises(ValueError, match="Variable shared/kernel already exists"):
        tf.layers.dense(x, 2, name="shared")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b = sess.run([y1, y2], feed_dict={x: np.ones([1, 3])})
    np.testing.assert_array_equal(a, b)


def test_dense_reuse_without_a_name_and_in_a_reusing_scope():
    x = tf.placeholder(tf.float32, [None, 3])
    tf.layers.dense(x, 2)
    tf.layers.dense(x, 2, reuse=True)  # TF: reuses "dense"
    assert len(tf.trainable_variables()) == 2

    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, 3])

    def model(inputs):
        return tf.layers.dense(tf.layers.dense(inputs, 4), 1)

    with tf.variable_scope("m"):
        model(x)
    with tf.variable_scope("m", reuse=True):
        model(x)
    assert [v.name for v in tf.trainable_variables()] == [
        "m/dense/kernel:0", "m/dense/bias:0", "m/dense_1/kernel:0", "m/dense_1/bias:0"]


def test_dense_trainable_false_and_dtype():
    x = tf.constant(np.ones([2, 3]), dtype=tf.float64)
    y = tf.layers.dense(x, 2, trainable=False)
    assert tf.trainable_variables() == []
    assert [v.dtype.base_dtype for v in tf.global_variables()] == [tf.float64, tf.float64]
    assert y.dtype == tf.float64


def test_dense_on_rank_3_inputs():
    x = tf.placeholder(tf.float32, [None, 2, 3])
    y = tf.layers.dense(x, 4, kernel_initializer=tf.ones_initializer())
    xv = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        yv = sess.run(y, feed_dict={x: xv})
    assert yv.shape == (2, 2, 4)
    np.testing.assert_allclose(yv, np.repeat(xv.sum(-1, keepdims=True), 4, axis=-1))


def test_dense_input_errors():
    with pytest.raises(ValueError, match="Input 0 of layer dense is incompatible with the "
                                         "layer: expected min_ndim=2, found ndim=1"):
        tf.layers.dense(tf.constant([1.0, 2.0]), 3)
    with pytest.raises(ValueError, match="The last dimension of the inputs to `Dense` should "
                                         "be defined. Found `None`."):
        tf.layers.dense(tf.placeholder(tf.float32, [2, None]), 3)
    assert tf.global_variables() == []
