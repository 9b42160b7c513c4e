"""tf's array ops that move elements into another shape (transpose, tile, broadcast_to,
expand_dims, squeeze, range, rank, ...) over the C++ ops: values against numpy, TF's static
shapes, TF's argument errors, and gradients through tf.gradients."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def run(*tensors):
    with tf.Session() as sess:
        return sess.run(list(tensors))


def test_transpose_matches_numpy_with_static_shapes():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    reversed_ = tf.transpose(x)
    permuted = tf.transpose(x, perm=[1, 0, 2], name="t")
    assert reversed_.shape.as_list() == [4, 3, 2]
    assert permuted.shape.as_list() == [3, 2, 4]
    assert permuted.op.name == "t"
    assert tf.transpose(x, conjugate=True).shape.as_list() == [4, 3, 2]  # real: no conjugate
    unknown = tf.placeholder(tf.int64)
    dynamic = tf.transpose(unknown)
    with tf.Session() as sess:
        got_r, got_p = sess.run([reversed_, permuted])
        got_d = sess.run(dynamic, {unknown: np.arange(6).reshape(1, 2, 3)})
    np.testing.assert_array_equal(got_r, x.T)
    np.testing.assert_array_equal(got_p, x.transpose(1, 0, 2))
    np.testing.assert_array_equal(got_d, np.arange(6).reshape(1, 2, 3).T)


def test_transpose_rejects_a_bad_permutation():
    with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
        tf.transpose(tf.zeros([2, 3]), perm=[0, 1, 2])
    p = tf.placeholder(tf.int32)
    t = tf.transpose(tf.zeros([2, 3]), perm=p)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="0 is missing from"):
            sess.run(t, {p: [1, 1]})


def test_tile_and_broadcast_to_match_numpy():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    tiled = tf.tile(x, [2, 3])
    col = np.array([[1.0], [2.0]])
    broadcast = tf.broadcast_to(col, [3, 2, 4])
    assert tiled.shape.as_list() == [4, 9]
    assert broadcast.shape.as_list() == [3, 2, 4]
    got_t, got_b = run(tiled, broadcast)
    np.testing.assert_array_equal(got_t, np.tile(x, [2, 3]))
    np.testing.assert_array_equal(got_b, np.broadcast_to(col, [3, 2, 4]))


def test_expand_dims_and_squeeze():
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 1, 3)
    assert tf.expand_dims(x, 0).shape.as_list() == [1, 1, 2, 1, 3]
    assert tf.expand_dims(x, dim=-1).shape.as_list() == [1, 2, 1, 3, 1]
    assert tf.squeeze(x).shape.as_list() == [2, 3]
    assert tf.squeeze(x, axis=2).shape.as_list() == [1, 2, 3]
    assert tf.squeeze(x, squeeze_dims=[0, -2]).shape.as_list() == [2, 3]
    got = run(tf.expand_dims(x, 1), tf.squeeze(x, [0]))
    np.testing.assert_array_equal(got[0], np.expand_dims(x, 1))
    np.testing.assert_array_equal(got[1], np.squeeze(x, 0))
    with pytest.raises(ValueError, match="Cannot specify both 'axis' and 'dim'"):
        tf.expand_dims(x, 0, dim=0)
    with pytest.raises(ValueError, match="Can not squeeze dim\\[1\\], expected a dimension of 1"):
        tf.squeeze(x, axis=1)


def test_range_and_rank():
    assert tf.range(5).dtype == tf.int32
    assert tf.range(5).shape.as_list() == [5]
    assert tf.range(1, 2.5, 0.5).dtype == tf.float32
    assert tf.range(0, 10, 3, dtype=tf.int64).dtype == tf.int64
    got = run(tf.range(5), tf.range(1, 2.5, 0.5), tf.range(10, 0, -3), tf.rank(tf.zeros([2, 3])))
    np.testing.assert_array_equal(got[0], np.arange(5))
    np.testing.assert_allclose(got[1], [1.0, 1.5, 2.0])
    np.testing.assert_array_equal(got[2], [10, 7, 4, 1])
    assert got[3] == 2
    p = tf.placeholder(tf.float32)
    with tf.Session() as sess:
        assert sess.run(tf.rank(p), {p: np.zeros([1, 2, 3])}) == 3
    with pytest.raises(ValueError, match="Requires delta != 0"):
        tf.range(0, 5, 0)


def test_gradients_through_transpose_and_tile():
    x = tf.constant(np.arange(6, dtype=np.float64).reshape(2, 3))
    w = tf.constant(np.arange(12, dtype=np.float64).reshape(3, 4))
    y = tf.reduce_sum(tf.transpose(x) * tf.tile(tf.ones([3, 2], tf.float64), [1, 1]))
    z = tf.reduce_sum(tf.tile(x, [2, 1]) * tf.transpose(tf.tile(w, [1, 1])))
    gx, = tf.gradients(y, [x])
    gz = tf.gradients(z, [x, w])
    got_x, got_zx, got_zw = run(gx, *gz)
    np.testing.assert_allclose(got_x, np.ones([2, 3]))
    wt = np.arange(12, dtype=np.float64).reshape(3, 4).T  # [4, 3]
    np.testing.assert_allclose(got_zx, wt[:2] + wt[2:])
    xt = np.tile(np.arange(6, dtype=np.float64).reshape(2, 3), [2, 1])
    np.testing.assert_allclose(got_zw, xt.T)


def test_gradient_through_broadcast_to_and_expand_dims():
    x = tf.constant([[1.0], [2.0]])
    y = tf.reduce_sum(tf.broadcast_to(tf.expand_dims(x, 0), [3, 2, 4]))
    g, = tf.gradients(y, [x])
    assert run(g)[0].tolist() == [[12.0], [12.0]]


def test_split_with_a_number_or_sizes():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    halves = tf.split(x, 2, axis=1)
    sized = tf.split(x, [1, -1, 2], axis=0)
    single = tf.split(x, 1)
    assert [p.shape.as_list() for p in halves] == [[4, 3], [4, 3]]
    assert [p.shape.as_list() for p in sized] == [[1, 6], [1, 6], [2, 6]]
    assert isinstance(single, list) and len(single) == 1
    got = run(*halves, *sized)
    for a, b in zip(got, np.split(x, 2, axis=1) + np.split(x, [1, 2], axis=0)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="evenly divisible by 4 but is 6"):
        tf.split(x, 4, axis=1)


def test_one_hot_reverse_and_cumsum_match_numpy():
    indices = np.array([[0, 2], [1, 5]])
    hot = tf.one_hot(indices, 3)
    hot_axis0 = tf.one_hot(indices, 3, on_value=7, off_value=-1, axis=0)
    assert hot.dtype == tf.float32 and hot.shape.as_list() == [2, 2, 3]
    assert hot_axis0.dtype == tf.int32 and hot_axis0.shape.as_list() == [3, 2, 2]
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    got = run(hot, hot_axis0, tf.reverse(x, [1]), tf.reverse_v2(x, [0, -1]),
              tf.math.cumsum(x, axis=1), tf.cumsum(x, exclusive=True, reverse=True))
    expected_hot = (indices[..., None] == np.arange(3)).astype(np.float32)  # 5 is off
    np.testing.assert_array_equal(got[0], expected_hot)
    np.testing.assert_array_equal(got[1], np.where(np.moveaxis(expected_hot, -1, 0) > 0, 7, -1))
    np.testing.assert_array_equal(got[2], x[:, ::-1])
    np.testing.assert_array_equal(got[3], x[::-1, ::-1])
    np.testing.assert_array_equal(got[4], np.cumsum(x, axis=1))
    rev = np.cumsum(x[::-1], axis=0)[::-1]
    np.testing.assert_array_equal(got[5], rev - x)
    with pytest.raises(TypeError, match="dtype"):
        tf.one_hot(indices, 3, on_value=1.0, dtype=tf.int32)


def test_gradients_through_split_and_cumsum():
    x = tf.constant(np.arange(6, dtype=np.float64).reshape(2, 3))
    a, b = tf.split(x, [2, 1], axis=1)
    y = tf.reduce_sum(tf.cumsum(a, axis=1) * 2.0) + tf.reduce_sum(tf.reverse(b, [0]))
    g, = tf.gradients(y, [x])
    # cumsum over 2 columns: column 0 counts twice, column 1 once; times 2; b's gradient 1.
    np.testing.assert_allclose(run(g)[0], [[4.0, 2.0, 1.0], [4.0, 2.0, 1.0]])


def test_pad_reflect_and_symmetric_match_numpy_with_gradient():
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    paddings = [[1, 1], [2, 2]]
    reflect = tf.pad(x, paddings, mode="REFLECT")
    symmetric = tf.pad(x, paddings, mode="symmetric")
    assert reflect.shape.as_list() == [4, 7]
    got = run(reflect, symmetric)
    np.testing.assert_array_equal(got[0], np.pad(x, paddings, mode="reflect"))
    np.testing.assert_array_equal(got[1], np.pad(x, paddings, mode="symmetric"))
    with pytest.raises(ValueError, match="Unknown padding mode: WRAP"):
        tf.pad(x, paddings, mode="wrap")
    v = tf.constant(x)
    g, = tf.gradients(tf.reduce_sum(tf.pad(v, [[0, 0], [1, 1]], mode="SYMMETRIC")), [v])
    np.testing.assert_array_equal(run(g)[0], [[2, 1, 2], [2, 1, 2]])
