"""FIFOQueue: TF 1.x's construction checks, blocking, closing, batches, named components."""

import threading

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


def test_enqueue_dequeue_and_size():
    q = tf.FIFOQueue(10, [tf.int32, tf.string], name="q")
    x = tf.placeholder(tf.int32)
    enq = q.enqueue([x, "name"])
    assert enq.name == "q_enqueue"
    out = q.dequeue()
    assert isinstance(out, list) and len(out) == 2
    with tf.Session() as s:
        for i in range(3):
            s.run(enq, {x: i})
        assert s.run(q.size()) == 3
        assert s.run(out) == [0, b"name"]


def test_dequeue_many_and_up_to_need_shapes_and_close_ends_them():
    q = tf.FIFOQueue(-1, [tf.float32], shapes=[[2]])
    many = q.dequeue_many(2)
    up_to = q.dequeue_up_to(5)
    assert many.shape == tf.TensorShape([2, 2])
    with tf.Session() as s:
        s.run(q.enqueue_many([np.arange(6, dtype=np.float32).reshape(3, 2)]))
        np.testing.assert_array_equal(s.run(many), [[0, 1], [2, 3]])
        s.run(q.close())
        np.testing.assert_array_equal(s.run(up_to), [[4, 5]])
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(up_to)
    unshaped = tf.FIFOQueue(1, [tf.int32])
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="require the components to have specified shapes"):
            s.run(unshaped.dequeue_many(1))


def test_a_blocked_dequeue_is_woken_by_an_enqueue_from_another_thread():
    q = tf.FIFOQueue(1, [tf.int32])
    take = q.dequeue()
    put = q.enqueue(7)
    with tf.Session() as s:
        result = []
        t = threading.Thread(target=lambda: result.append(s.run(take)))
        t.start()
        s.run(put)
        t.join(timeout=30)
        assert result == [7]


def test_close_with_cancel_pending_enqueues_fails_the_blocked_enqueue():
    q = tf.FIFOQueue(1, [tf.int32])
    put = q.enqueue(1)
    with tf.Session() as s:
        s.run(put)  # full now
        outcome = []

        def blocked():
            try:
                s.run(put)
                outcome.append("enqueued")
            except tf.errors.CancelledError:
                outcome.append("cancelled")

        t = threading.Thread(target=blocked)
        t.start()
        # Whether the close lands before or after the enqueue waits, it is cancelled.
        s.run(q.close(cancel_pending_enqueues=True))
        t.join(timeout=30)
        assert not t.is_alive()
        assert outcome == ["cancelled"]
        with pytest.raises(tf.errors.CancelledError):
            s.run(put)


def test_named_queues_take_and_give_dicts():
    q = tf.FIFOQueue(2, [tf.int32, tf.float32], names=["i", "f"])
    enq = q.enqueue({"i": 1, "f": 2.0})
    out = q.dequeue()
    with tf.Session() as s:
        s.run(enq)
        assert s.run(out) == {"i": 1, "f": 2.0}
    with pytest.raises(ValueError, match="You must enqueue a dictionary in a Queue with names"):
        q.enqueue([1, 2.0])
    plain = tf.FIFOQueue(2, [tf.int32])
    with pytest.raises(ValueError, match="Queue must have names to enqueue a dictionary"):
        plain.enqueue({"i": 1})


def test_shapes_must_be_fully_defined():
    with pytest.raises(ValueError, match="All shapes must be fully defined"):
        tf.FIFOQueue(1, [tf.int32], shapes=[[None]])


def test_queue_ops_are_named_in_the_current_scope_and_check_shapes():
    with tf.name_scope("input"):
        q = tf.FIFOQueue(2, [tf.float32], shapes=[[2]], name="q")
        assert q.queue_ref.op.name == "input/q"
        assert q.dequeue().op.name == "input/q_Dequeue"
    with pytest.raises(ValueError, match="are incompatible"):
        q.enqueue(tf.constant([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="are incompatible"):
        q.enqueue_many(tf.constant([[1.0, 2.0, 3.0]]))


def test_a_queue_made_under_control_dependencies_does_not_depend_on_them():
    x = tf.placeholder(tf.float32)
    with tf.control_dependencies([tf.identity(x)]):
        q = tf.FIFOQueue(1, [tf.int32])
        v = tf.Variable(1, name="v")
    assert q.queue_ref.op.control_inputs == [] and v.op.control_inputs == []
    with tf.Session() as s:
        s.run(v.initializer)  # no need to feed x
        assert s.run(q.size()) == 0
