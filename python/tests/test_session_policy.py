"""The monitored-session policy is the C++ one (tensorweave/train/session_policy.h): Python's
SessionManager and MonitoredSession call it, so its rules hold in Python exactly: the chief
keeps a model a ps task holds, waiting workers poll at the policy's interval, recoverable
errors are retried with its backoff and everything else is raised unchanged."""

import threading
import time

import numpy as np
import pytest

import tensorweave.compat.v1 as tf
from tensorweave import _native


def test_only_aborted_and_unavailable_are_recoverable():
    codes = {cls: cls(None, None, "x").error_code for cls in (
        tf.errors.AbortedError, tf.errors.UnavailableError, tf.errors.InvalidArgumentError,
        tf.errors.DeadlineExceededError, tf.errors.CancelledError)}
    recoverable = {cls for cls, code in codes.items() if _native.is_recoverable_error_code(code)}
    assert recoverable == {tf.errors.AbortedError, tf.errors.UnavailableError}


def test_the_chief_keeps_a_ready_model_else_restores_else_initializes():
    assert _native.chief_preparation(True, True) == "keep"
    assert _native.chief_preparation(False, True) == "restore"
    assert _native.chief_preparation(False, False) == "initialize"


def test_workers_poll_at_the_policys_interval_by_default():
    assert tf.train.SessionManager()._recovery_wait_secs == _native.MODEL_READY_POLL_SECS
    assert _native.MODEL_READY_POLL_SECS == pytest.approx(0.2)


def test_wait_returns_once_ready_and_remakes_the_session_after_a_recoverable_error():
    answers = [tf.errors.UnavailableError(None, None, "ps restarting"), ["w"], []]
    polls, remakes = [], []

    def probe():
        polls.append(1)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    _native.wait_for_model_ready(probe, lambda: remakes.append(1), 60.0, 0.001)
    assert len(polls) == 3 and len(remakes) == 1


def test_wait_raises_the_probes_own_exception_unchanged():
    class Interrupted(Exception):
        pass

    def probe():
        raise Interrupted("stop waiting")

    with pytest.raises(Interrupted, match="stop waiting"):
        _native.wait_for_model_ready(probe, None, 60.0, 0.001)
    error = tf.errors.InvalidArgumentError(None, None, "no such op")
    with pytest.raises(tf.errors.InvalidArgumentError) as raised:
        _native.wait_for_model_ready(lambda: (_ for _ in ()).throw(error), None, 60.0, 0.001)
    assert raised.value is error


def test_wait_gives_up_at_the_deadline_naming_what_is_missing():
    start = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError,
                       match="Session was not ready after waiting 0 secs; variables not "
                             "initialized: a, b"):
        _native.wait_for_model_ready(lambda: ["a", "b"], None, 0.05, 0.001)
    assert time.monotonic() - start < 10


def test_retry_repeats_recoverable_errors_then_succeeds():
    attempts = []

    def attempt():
        attempts.append(1)
        if len(attempts) < 3:
            raise tf.errors.AbortedError(None, None, "restarted")

    _native.retry_while_recoverable(attempt, 60.0)
    assert len(attempts) == 3


def test_retry_gives_up_at_its_timeout_keeping_the_error_class():
    def attempt():
        raise tf.errors.UnavailableError(None, None, "ps gone")

    with pytest.raises(tf.errors.UnavailableError,
                       match="could not recover the training session within 250ms: ps gone"):
        _native.retry_while_recoverable(attempt, 0.25)


def test_the_chief_keeps_the_model_a_server_still_holds(tmp_path):
    # A chief restarted while the ps kept running: the server's values are newer than the
    # checkpoint, and the policy keeps them (TF would restore the checkpoint over them).
    server = tf.train.Server.create_local_server()
    ckpt = str(tmp_path)
    try:
        with tf.Graph().as_default():
            w = tf.Variable([1.0, 2.0], name="w")
            saver = tf.train.Saver()
            with tf.Session(server.target) as sess:
                sess.run(w.initializer)
                saver.save(sess, ckpt + "/model.ckpt")
                sess.run(w.assign([7.0, 8.0]))
        with tf.Graph().as_default():
            w = tf.Variable([0.0, 0.0], name="w")
            sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
            sess = sm.prepare_session(server.target, init_op=tf.global_variables_initializer(),
                                      saver=tf.train.Saver(), checkpoint_dir=ckpt)
            np.testing.assert_array_equal(sess.run(w), [7.0, 8.0])
            sess.close()
    finally:
        server.stop()


def test_prepare_session_waits_for_a_checkpoint_that_appears(tmp_path):
    # TF's wait_for_checkpoint=True: the chief waits (the policy's wait, in C++) until a
    # checkpoint is there, then restores it; without a wait it initializes at once.
    ckpt = str(tmp_path)
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(w.assign([5.0, 6.0]))
            timer = threading.Timer(0.3, lambda: saver.save(sess, ckpt + "/model.ckpt"))
            timer.start()
            sm = tf.train.SessionManager(recovery_wait_secs=0.05)
            start = time.monotonic()
            restored = sm.prepare_session("", init_op=tf.global_variables_initializer(),
                                          saver=saver, checkpoint_dir=ckpt,
                                          wait_for_checkpoint=True, max_wait_secs=30)
            timer.join()
            assert time.monotonic() - start >= 0.25
            np.testing.assert_array_equal(restored.run(w), [5.0, 6.0])
            restored.close()
    assert _native.wait_for_checkpoint(str(tmp_path / "empty"), 0.1, 0.02) is None
