"""tf.train.Coordinator and tf.train.LooperThread against TF 1.x's documented behaviour
(coordinator_test.py in TF 1.x). Threads synchronize on Events, never on sleeps."""

import threading
import time

import pytest

import tensorweave.compat.v1 as tf

WAIT = 30  # seconds: only a broken implementation waits this long


def _stop_on_exception_thread(coord, exception, started=None):
    def body():
        with coord.stop_on_exception():
            if started is not None:
                started.set()
            raise exception

    t = threading.Thread(target=body)
    t.start()
    return t


def test_request_stop_and_should_stop():
    coord = tf.train.Coordinator()
    assert not coord.should_stop()
    assert not coord.wait_for_stop(0.01)
    coord.request_stop()
    assert coord.should_stop()
    assert coord.wait_for_stop(0.01)
    coord.request_stop()  # again: harmless
    assert coord.should_stop()


def test_threads_stop_together():
    coord = tf.train.Coordinator()
    seen_stop = []

    def worker(i):
        coord.wait_for_stop(WAIT)
        seen_stop.append(i)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=WAIT)
    assert sorted(seen_stop) == [0, 1, 2]
    assert coord.joined


def test_join_without_stop_returns_when_the_threads_end():
    coord = tf.train.Coordinator()
    threads = [threading.Thread(target=lambda: None) for _ in range(2)]
    for t in threads:
        t.start()
    coord.join(threads, stop_grace_period_secs=WAIT)
    assert coord.joined


def test_join_raises_the_first_reported_exception():
    coord = tf.train.Coordinator()
    first = _stop_on_exception_thread(coord, ValueError("first"))
    first.join(WAIT)
    second = _stop_on_exception_thread(coord, TypeError("second"))
    second.join(WAIT)
    assert coord.should_stop()
    with pytest.raises(ValueError, match="first"):
        coord.join([first, second], stop_grace_period_secs=WAIT)


def test_exception_after_a_clean_stop_is_not_recorded():
    # TF records an exception only while no stop was requested yet.
    coord = tf.train.Coordinator()
    coord.request_stop()
    t = _stop_on_exception_thread(coord, ValueError("late"))
    t.join(WAIT)
    coord.join([t], stop_grace_period_secs=WAIT)


def test_request_stop_with_an_exception_or_exc_info():
    coord = tf.train.Coordinator()
    try:
        raise RuntimeError("boom")
    except RuntimeError as e:
        coord.request_stop(e)
    with pytest.raises(RuntimeError, match="boom"):
        coord.raise_requested_exception()
    with pytest.raises(RuntimeError, match="boom"):
        coord.join()

    coord = tf.train.Coordinator()
    try:
        raise KeyError("as exc_info")
    except KeyError:
        import sys
        coord.request_stop(ex=sys.exc_info())
    with pytest.raises(KeyError, match="as exc_info"):
        coord.join()


def test_raise_requested_exception_without_one_does_nothing():
    coord = tf.train.Coordinator()
    coord.raise_requested_exception()
    coord.request_stop()
    coord.raise_requested_exception()


def test_out_of_range_is_a_clean_stop():
    coord = tf.train.Coordinator()
    t = _stop_on_exception_thread(
        coord, tf.errors.OutOfRangeError(None, None, "the input is exhausted"))
    t.join(WAIT)
    assert coord.should_stop()
    coord.join([t], stop_grace_period_secs=WAIT)  # does not raise


def test_clean_stop_exception_types():
    coord = tf.train.Coordinator(clean_stop_exception_types=(ValueError,))
    t = _stop_on_exception_thread(coord, ValueError("clean"))
    t.join(WAIT)
    coord.join([t], stop_grace_period_secs=WAIT)

    coord = tf.train.Coordinator(clean_stop_exception_types=[])
    t = _stop_on_exception_thread(coord, tf.errors.OutOfRangeError(None, None, "not clean"))
    t.join(WAIT)
    with pytest.raises(tf.errors.OutOfRangeError, match="not clean"):
        coord.join([t], stop_grace_period_secs=WAIT)


def test_join_raises_for_threads_that_do_not_stop():
    coord = tf.train.Coordinator()
    release = threading.Event()

    def stubborn():
        release.wait(WAIT)  # ignores the coordinator

    t = threading.Thread(target=stubborn, name="stubborn-thread")
    t.start()
    try:
        coord.request_stop()
        start = time.monotonic()
        with pytest.raises(RuntimeError, match="Coordinator stopped with threads still "
                                               "running: stubborn-thread"):
            coord.join([t], stop_grace_period_secs=0.01)
        assert time.monotonic() - start < WAIT / 2
    finally:
        release.set()
        t.join(WAIT)


def test_join_ignore_live_threads():
    coord = tf.train.Coordinator()
    release = threading.Event()
    t = threading.Thread(target=lambda: release.wait(WAIT))
    t.start()
    try:
        coord.request_stop()
        coord.join([t], stop_grace_period_secs=0.01, ignore_live_threads=True)
        assert coord.joined
    finally:
        release.set()
        t.join(WAIT)


def test_an_exception_wins_over_stragglers():
    coord = tf.train.Coordinator()
    release = threading.Event()
    straggler = threading.Thread(target=lambda: release.wait(WAIT))
    straggler.start()
    try:
        failing = _stop_on_exception_thread(coord, ValueError("reported"))
        failing.join(WAIT)
        with pytest.raises(ValueError, match="reported"):
            coord.join([straggler, failing], stop_grace_period_secs=0.01)
    finally:
        release.set()
        straggler.join(WAIT)


def test_registered_threads_are_joined():
    coord = tf.train.Coordinator()
    done = []

    def body():
        coord.wait_for_stop(WAIT)
        done.append(True)

    t = threading.Thread(target=body)
    coord.register_thread(t)
    t.start()
    coord.request_stop()
    coord.join(stop_grace_period_secs=WAIT)
    assert done == [True]


def test_join_with_a_registered_thread_never_started():
    coord = tf.train.Coordinator()
    tf.train.LooperThread(coord, 1.0, target=lambda: None)  # registered, not started
    coord.request_stop()
    coord.join(stop_grace_period_secs=WAIT)


def test_request_stop_after_join_raises_the_exception():
    coord = tf.train.Coordinator()
    coord.request_stop()
    coord.join()
    with pytest.raises(ValueError, match="after join"):
        coord.request_stop(ValueError("after join"))


def test_clear_stop():
    coord = tf.train.Coordinator()
    t = _stop_on_exception_thread(coord, ValueError("x"))
    t.join(WAIT)
    with pytest.raises(ValueError):
        coord.join([t])
    coord.clear_stop()
    assert not coord.should_stop()
    assert not coord.joined
    coord.request_stop()
    coord.join()  # the old exception is gone


def test_stop_on_exception_without_an_exception():
    coord = tf.train.Coordinator()
    with coord.stop_on_exception():
        pass
    assert not coord.should_stop()


# ---- LooperThread ----

def test_looper_thread_calls_target_until_stop():
    coord = tf.train.Coordinator()
    calls = []
    three = threading.Event()

    def target(x, y=0):
        calls.append((x, y))
        if len(calls) >= 3:
            three.set()

    looper = tf.train.LooperThread(coord, 0.001, target=target, args=(1,), kwargs={"y": 2})
    looper.start()
    assert three.wait(WAIT)
    coord.request_stop()
    coord.join(stop_grace_period_secs=WAIT)  # the looper registered itself
    assert not looper.is_alive()
    assert calls[:3] == [(1, 2)] * 3


def test_looper_thread_back_to_back_and_loop():
    coord = tf.train.Coordinator()
    count = [0]
    enough = threading.Event()

    def target():
        count[0] += 1
        if count[0] >= 5:
            enough.set()

    looper = tf.train.LooperThread.loop(coord, None, target)
    assert enough.wait(WAIT)
    coord.request_stop()
    coord.join([looper], stop_grace_period_secs=WAIT)
    assert count[0] >= 5


def test_looper_thread_subclass_run_loop():
    coord = tf.train.Coordinator()
    events = []
    ran = threading.Event()

    class Looper(tf.train.LooperThread):
        def start_loop(self):
            events.append("start")

        def run_loop(self):
            events.append("run")
            ran.set()

        def stop_loop(self):
            events.append("stop")

    looper = Looper(coord, 0.001)
    looper.start()
    assert ran.wait(WAIT)
    coord.request_stop()
    coord.join(stop_grace_period_secs=WAIT)
    assert events[0] == "start"
    assert events[-1] == "stop"
    assert set(events[1:-1]) == {"run"}


def test_looper_thread_reports_exceptions():
    coord = tf.train.Coordinator()

    def target():
        raise ValueError("from the looper")

    tf.train.LooperThread.loop(coord, 0.001, target)
    assert coord.wait_for_stop(WAIT)
    with pytest.raises(ValueError, match="from the looper"):
        coord.join(stop_grace_period_secs=WAIT)


def test_looper_thread_arguments():
    with pytest.raises(ValueError, match="'coord' argument must be a Coordinator"):
        tf.train.LooperThread(object(), 1.0, target=lambda: None)
    with pytest.raises(ValueError, match="'args' and 'kwargs' argument require that you "
                                         "also pass 'target'"):
        tf.train.LooperThread(tf.train.Coordinator(), 1.0, args=(1,))
