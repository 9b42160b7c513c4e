"""tf.train.Supervisor, SessionManager and QueueRunner: the pre-MonitoredSession way of
running a training cluster, as TF 1.x programs of that era use it."""

import threading

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


def _model():
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(np.float32(1.0), name="w")
    train = tf.group(w.assign_add(1.0), step.assign_add(1))
    return step, w, train


def test_chief_initializes_saves_and_a_new_supervisor_restores(tmp_path):
    step, w, train = _model()
    # No checkpoint thread (save_model_secs=0): its first save would race this test's.
    sv = tf.train.Supervisor(is_chief=True, logdir=str(tmp_path), global_step=step,
                             save_model_secs=0)
    assert tf.get_default_graph().finalized
    with sv.managed_session() as sess:
        for _ in range(3):
            sess.run(train)
        assert not sv.should_stop()
        sv.saver.save(sess, sv.save_path, global_step=step)
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-3")

    tf.reset_default_graph()
    step, w, train = _model()
    sv = tf.train.Supervisor(is_chief=True, logdir=str(tmp_path))
    with sv.managed_session() as sess:
        assert sess.run([step, w]) == [3, 4.0]  # restored, not initialized


def test_checkpoint_thread_saves_every_save_model_secs(tmp_path):
    step, _, train = _model()
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=0.05)
    with sv.managed_session() as sess:
        sess.run(train)
        # The thread saves on its first turn and then every 50 ms; wait for one that
        # includes the step (bounded by the test's timeout, not a sleep for correctness).
        while tf.train.latest_checkpoint(str(tmp_path)) is None or \
                not tf.train.latest_checkpoint(str(tmp_path)).endswith("-1"):
            sv.coord.wait_for_stop(0.01)
    assert tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths


def test_errors_in_the_body_are_reraised_and_out_of_range_ends_cleanly(tmp_path):
    _model()
    sv = tf.train.Supervisor(logdir=None)
    with sv.managed_session() as sess:
        raise tf.errors.OutOfRangeError(None, None, "input exhausted")
    assert sv.should_stop()
    tf.reset_default_graph()  # a Supervisor finalizes its graph
    _model()
    sv = tf.train.Supervisor(logdir=None)
    with pytest.raises(ValueError, match="boom"):
        with sv.managed_session() as sess:
            raise ValueError("boom")
    del sess


def test_worker_waits_for_the_chief_on_a_shared_server():
    server = tf.train.Server.create_local_server()
    step, w, train = _model()
    ready = tf.report_uninitialized_variables()
    init = tf.global_variables_initializer()
    worker = tf.train.Supervisor(is_chief=False, logdir=None, ready_op=ready,
                                 recovery_wait_secs=0.1)
    got = {}

    def run_worker():
        with worker.managed_session(server.target) as sess:
            got["w"] = sess.run(w)

    thread = threading.Thread(target=run_worker)
    thread.start()
    # The chief comes second and initializes: the worker sees the initialized model.
    sm = tf.train.SessionManager(ready_op=ready)
    chief = sm.prepare_session(server.target, init_op=init)
    thread.join(60)
    assert not thread.is_alive()
    assert got["w"] == 1.0
    chief.close()
    server.stop()


def test_worker_gives_up_after_max_wait_secs():
    _model()
    sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(),
                                 recovery_wait_secs=0.01)
    with pytest.raises(tf.errors.DeadlineExceededError, match="not initialized: .*w"):
        sm.wait_for_session("", max_wait_secs=0.05)


def test_queue_runner_fills_a_queue_until_the_coordinator_stops():
    queue = tf.FIFOQueue(10, tf.int64)
    counter = tf.Variable(np.int64(0), name="counter")
    enqueue = queue.enqueue(counter.assign_add(1))
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue, enqueue]))
    dequeue = queue.dequeue()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        assert len(threads) == 3  # two enqueue threads and the one closing the queue
        values = sorted(sess.run(dequeue) for _ in range(20))
        assert values == sorted(set(values)) and all(v >= 1 for v in values)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
        assert sess.run(queue.is_closed())


def test_queue_runner_stops_when_its_queue_closes_and_reports_errors():
    queue = tf.FIFOQueue(10, tf.float32)
    # A plain close waits behind the enqueue blocked on the full queue (as TF's does).
    close = queue.close(cancel_pending_enqueues=True)
    qr = tf.train.QueueRunner(queue, [queue.enqueue(1.0)])
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = qr.create_threads(sess, coord=coord, start=True)
        sess.run(close)
        threads[0].join(30)
        assert not threads[0].is_alive()  # Cancelled (closed) ends the thread cleanly
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    failing = tf.FIFOQueue(1, tf.float32)
    # An index out of range fails the enqueue op's step with InvalidArgument.
    bad = tf.train.QueueRunner(failing, [failing.enqueue(tf.gather(tf.constant([1.0]), 5))])
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = bad.create_threads(sess, coord=coord, start=True)
        with pytest.raises(tf.errors.InvalidArgumentError):
            coord.join(threads, stop_grace_period_secs=10)
