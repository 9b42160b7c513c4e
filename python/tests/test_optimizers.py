"""tf.train's optimizers and global step: updates against hand-computed values, slots,
sparse updates through gather, and TF's errors."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield


def _quadratic():
    """loss = sum(g * w) for a constant g: the gradient with respect to w is g."""
    w = tf.Variable(np.array([1.0, 2.0], np.float32), name="w")
    g = tf.constant(np.array([0.5, -1.0], np.float32))
    return w, g, tf.reduce_sum(w * g)


def _run_steps(optimizer, steps):
    w, g, loss = _quadratic()
    train = optimizer.minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train)
        slots = {name: sess.run(optimizer.get_slot(w, name))
                 for name in optimizer.get_slot_names()}
        return sess.run(w), slots


W0 = np.array([1.0, 2.0])
G = np.array([0.5, -1.0])


def test_gradient_descent():
    w, slots = _run_steps(tf.train.GradientDescentOptimizer(0.1), 2)
    np.testing.assert_allclose(w, W0 - 2 * 0.1 * G, rtol=1e-6)
    assert slots == {}


def test_momentum():
    w, slots = _run_steps(tf.train.MomentumOptimizer(0.1, momentum=0.9), 2)
    accum1 = G
    accum2 = 0.9 * accum1 + G
    np.testing.assert_allclose(w, W0 - 0.1 * accum1 - 0.1 * accum2, rtol=1e-6)
    np.testing.assert_allclose(slots["momentum"], accum2, rtol=1e-6)


def test_adagrad():
    w, slots = _run_steps(tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.1), 2)
    acc, expected = np.full(2, 0.1), W0.copy()
    for _ in range(2):
        acc = acc + G * G
        expected = expected - 0.1 * G / np.sqrt(acc)
    np.testing.assert_allclose(w, expected, rtol=1e-5)
    np.testing.assert_allclose(slots["accumulator"], acc, rtol=1e-6)


def test_adam():
    w, slots = _run_steps(tf.train.AdamOptimizer(0.01), 2)
    m, v, expected = np.zeros(2), np.zeros(2), W0.copy()
    for t in (1, 2):
        m = 0.9 * m + 0.1 * G
        v = 0.999 * v + 0.001 * G * G
        lr = 0.01 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        expected = expected - lr * m / (np.sqrt(v) + 1e-8)
    np.testing.assert_allclose(w, expected, rtol=1e-5)
    np.testing.assert_allclose(slots["m"], m, rtol=1e-5)
    np.testing.assert_allclose(slots["v"], v, rtol=1e-4)  # float32 (1 - beta2)


def test_rmsprop():
    w, slots = _run_steps(tf.train.RMSPropOptimizer(0.01, decay=0.9, momentum=0.5), 2)
    ms, mom, expected = np.ones(2), np.zeros(2), W0.copy()  # TF starts ms at ones
    for _ in range(2):
        ms = 0.9 * ms + 0.1 * G * G
        mom = 0.5 * mom + 0.01 * G / np.sqrt(ms + 1e-10)
        expected = expected - mom
    np.testing.assert_allclose(w, expected, rtol=1e-5)
    np.testing.assert_allclose(slots["rms"], ms, rtol=1e-5)
    np.testing.assert_allclose(slots["momentum"], mom, rtol=1e-5)


def test_slots_are_variables_beside_their_variable_and_saved_names():
    with tf.device("/job:ps/task:1"):
        w = tf.Variable(np.zeros(3, np.float32), name="w")
    opt = tf.train.AdamOptimizer()
    opt.minimize(tf.reduce_sum(w * 2.0))
    m = opt.get_slot(w, "m")
    assert m.op.name == "w/Adam" and m.device == "/job:ps/task:1"
    assert opt.get_slot(w, "v").op.name == "w/Adam_1"
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["beta1_power", "beta2_power", "w", "w/Adam", "w/Adam_1"]
    assert [v.op.name for v in tf.trainable_variables()] == ["w"]
    assert len(opt.variables()) == 4


def test_minimize_increments_the_global_step_and_respects_var_list():
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(1.0, name="b")
    step = tf.train.get_or_create_global_step()
    assert tf.train.get_or_create_global_step() is step
    assert tf.train.get_global_step() is step
    assert tf.contrib.framework.get_or_create_global_step() is step
    train = tf.train.GradientDescentOptimizer(1.0).minimize(a * b * 3.0, global_step=step,
                                                           var_list=[a])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        sess.run(train)
        assert sess.run([a, b, step]) == [-5.0, 1.0, 2]
    with pytest.raises(ValueError, match='"global_step" already exists'):
        tf.train.create_global_step()


def test_sparse_gradients_touch_only_the_gathered_rows():
    table = tf.Variable(np.ones((4, 2), np.float32), name="table")
    rows = tf.gather(table, [2, 0])
    opt = tf.train.AdagradOptimizer(0.5)
    grads_and_vars = opt.compute_gradients(tf.reduce_sum(rows), var_list=[table])
    assert isinstance(grads_and_vars[0][0], tf.IndexedSlices)
    train = opt.apply_gradients(grads_and_vars)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        value = sess.run(table)
    updated = 1.0 - 0.5 * 1.0 / np.sqrt(1.1)
    np.testing.assert_allclose(value[[0, 2]], updated, rtol=1e-6)
    np.testing.assert_array_equal(value[[1, 3]], 1.0)


def test_errors_as_tf():
    c = tf.constant(1.0)
    with pytest.raises(ValueError, match="No variables to optimize"):
        tf.train.GradientDescentOptimizer(0.1).minimize(c)
    v = tf.Variable(1.0, name="v")
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        tf.train.GradientDescentOptimizer(0.1).minimize(c * 2.0, var_list=[v])
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)
    with pytest.raises(TypeError, match="momentum must be a Python number"):
        tf.train.MomentumOptimizer(0.1, tf.constant(0.9))
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        tf.train.GradientDescentOptimizer(0.1).apply_gradients([(None, v)])


def test_a_decayed_learning_rate_tensor_drives_every_optimizer():
    # TF's optimizers take the learning rate as a tensor (here exponential_decay of the
    # global step) or a callable returning one; each step uses that step's rate.
    for make in (lambda lr: tf.train.GradientDescentOptimizer(lr),
                 lambda lr: tf.train.MomentumOptimizer(lr, 0.0),
                 lambda lr: tf.train.AdagradOptimizer(lambda: lr),
                 lambda lr: tf.train.AdamOptimizer(lr),
                 lambda lr: tf.train.RMSPropOptimizer(lr)):
        with tf.Graph().as_default():
            step = tf.train.get_or_create_global_step()
            lr = tf.train.exponential_decay(0.1, step, decay_steps=1, decay_rate=0.5)
            w = tf.Variable([1.0, 2.0], name="w")
            loss = tf.reduce_sum(w * w)
            train = make(lr).minimize(loss, global_step=step)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                before = sess.run(w)
                rates = []
                for _ in range(3):
                    rates.append(sess.run(lr))
                    sess.run(train)
                assert sess.run(step) == 3
                assert not np.allclose(sess.run(w), before)
            np.testing.assert_allclose(rates, [0.1, 0.05, 0.025], rtol=1e-6)
    with tf.Graph().as_default():
        w = tf.Variable([1.0], name="w")
        opt = tf.train.GradientDescentOptimizer(tf.constant(0.5))
        train = opt.minimize(tf.reduce_sum(w * w))
        with tf.Session() as sess:
            sess.run(w.initializer)
            sess.run(train)
            np.testing.assert_allclose(sess.run(w), [0.0])  # 1 - 0.5 * 2
    with pytest.raises(TypeError, match="learning_rate"):
        tf.train.GradientDescentOptimizer("fast")


def _ftrl_steps(optimizer, inits, grads, steps):
    variables = [tf.Variable(np.array(v, np.float32)) for v in inits]
    loss = tf.add_n([tf.reduce_sum(v * tf.constant(np.array(g, np.float32)))
                     for v, g in zip(variables, grads)])
    train = optimizer.minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train)
        return sess.run(variables), sess.run(
            [optimizer.get_slot(variables[0], name) for name in ("accum", "linear")])


def test_ftrl_matches_tensorflows_expected_values():
    """TF's ftrl_test: testFtrlwithoutRegularization and testFtrlWithL1_L2 (lr 3.0,
    initial accumulator 0.1), the values TF's tests expect."""
    (w0, w1), (accum, _) = _ftrl_steps(tf.train.FtrlOptimizer(3.0), [[0.0, 0.0], [0.0, 0.0]],
                                       [[0.1, 0.2], [0.01, 0.02]], 3)
    np.testing.assert_allclose(w0, [-2.60260963, -4.29698515], rtol=1e-5)
    np.testing.assert_allclose(w1, [-0.28432083, -0.56694895], rtol=1e-5)
    np.testing.assert_allclose(accum, 0.1 + 3 * np.array([0.1, 0.2]) ** 2, rtol=1e-5)
    tf.reset_default_graph()
    (w0, w1), _ = _ftrl_steps(
        tf.train.FtrlOptimizer(3.0, l1_regularization_strength=0.001,
                               l2_regularization_strength=2.0),
        [[1.0, 2.0], [4.0, 3.0]], [[0.1, 0.2], [0.01, 0.02]], 10)
    np.testing.assert_allclose(w0, [-0.24059935, -0.46829352], rtol=1e-5)
    np.testing.assert_allclose(w1, [-0.02406147, -0.04830509], rtol=1e-5)


def test_ftrl_shrinkage_and_power_and_sparse_rows():
    def reference(w, g, steps, lr, acc0=0.1, l1=0.0, l2=0.0, power=-0.5, shrinkage=0.0):
        w, acc, linear = np.array(w, float), np.full(len(w), acc0), np.zeros(len(w))
        for _ in range(steps):
            new_acc = acc + g * g
            linear += g + 2 * shrinkage * w - (new_acc ** -power - acc ** -power) / lr * w
            quadratic = new_acc ** -power / lr + 2 * l2
            w = np.where(np.abs(linear) > l1, (np.sign(linear) * l1 - linear) / quadratic, 0.0)
            acc = new_acc
        return w
    g = np.array([0.1, -0.2])
    (w,), _ = _ftrl_steps(tf.train.FtrlOptimizer(
        0.5, learning_rate_power=-0.7, l2_shrinkage_regularization_strength=0.3,
        l2_regularization_strength=0.1), [[1.0, 2.0]], [g], 4)
    np.testing.assert_allclose(w, reference([1.0, 2.0], g, 4, 0.5, l2=0.1, power=-0.7,
                                            shrinkage=0.3), rtol=1e-5)
    tf.reset_default_graph()
    table = tf.Variable(np.ones((4, 2), np.float32), name="table")
    opt = tf.train.FtrlOptimizer(1.0)
    # Row 2 twice: its gradients are summed first, as TF's optimizers do.
    train = opt.minimize(tf.reduce_sum(tf.gather(table, [2, 0, 2])), var_list=[table])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        value = sess.run(table)
    np.testing.assert_allclose(value[2], reference([1.0, 1.0], np.array([2.0, 2.0]), 1, 1.0),
                               rtol=1e-5)
    np.testing.assert_allclose(value[0], reference([1.0, 1.0], np.array([1.0, 1.0]), 1, 1.0),
                               rtol=1e-5)
    np.testing.assert_array_equal(value[[1, 3]], 1.0)
    names = sorted(v.op.name for v in opt.variables())
    assert names == ["table/Ftrl", "table/Ftrl_1"]
    with pytest.raises(ValueError, match="learning_rate_power"):
        tf.train.FtrlOptimizer(1.0, learning_rate_power=0.5)
