"""MonitoredSession, MonitoredTrainingSession, SingularMonitoredSession, Scaffold and the
standard hooks against TF 1.x's documented behaviour (monitored_session_test.py and
basic_session_run_hooks_test.py in TF 1.x). Real sessions, in this process or on a local
server; no sleeps decide an outcome."""

import logging
import os
import threading

import numpy as np
import pytest

import tensorweave.compat.v1 as tf
from tensorweave.training import session_manager as session_manager_lib


class RecordingHook(tf.train.SessionRunHook):
    """Records every call; may add fetches and feeds, and request stop after N steps."""

    def __init__(self, fetches=None, feed_dict=None, stop_after=None):
        self.calls = []
        self.fetches = fetches
        self.feed_dict = feed_dict
        self.stop_after = stop_after
        self.results = []
        self.original_args = []
        self.finalized_at = {}
        self.sessions = []
        self.coords = []
        self.steps = 0

    def begin(self):
        self.calls.append("begin")
        self.finalized_at["begin"] = tf.get_default_graph().finalized

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")
        self.finalized_at["after_create_session"] = tf.get_default_graph().finalized
        self.sessions.append(session)
        self.coords.append(coord)

    def before_run(self, run_context):
        self.calls.append("before_run")
        self.original_args.append(run_context.original_args)
        if self.fetches is None and self.feed_dict is None:
            return None
        return tf.train.SessionRunArgs(self.fetches, feed_dict=self.feed_dict)

    def after_run(self, run_context, run_values):
        self.calls.append("after_run")
        self.results.append(run_values.results)
        self.steps += 1
        if self.stop_after is not None and self.steps >= self.stop_after:
            run_context.request_stop()

    def end(self, session):
        self.calls.append("end")


def _counter_model():
    """A global step and a train op that increments it."""
    step = tf.train.get_or_create_global_step()
    train = tf.assign_add(step, 1)
    return step, train


# ---- the hook protocol ----

def test_hook_call_order():
    c = tf.constant(3.0)
    hook = RecordingHook()
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        assert hook.calls == ["begin", "after_create_session"]
        assert sess.run(c) == 3.0
        assert sess.run(c) == 3.0
        assert hook.calls[2:] == ["before_run", "after_run", "before_run", "after_run"]
    assert hook.calls == ["begin", "after_create_session", "before_run", "after_run",
                          "before_run", "after_run", "end"]
    # begin sees the graph still open; after_create_session sees it finalized.
    assert hook.finalized_at == {"begin": False, "after_create_session": True}
    assert isinstance(hook.sessions[0], tf.Session)
    assert isinstance(hook.coords[0], tf.train.Coordinator)


def test_hooks_are_called_in_order():
    order = []

    class Named(tf.train.SessionRunHook):
        def __init__(self, name):
            self.name = name

        def before_run(self, run_context):
            order.append(("before", self.name))

        def after_run(self, run_context, run_values):
            order.append(("after", self.name))

    c = tf.constant(1)
    with tf.train.MonitoredSession(hooks=[Named("a"), Named("b")]) as sess:
        sess.run(c)
    assert order == [("before", "a"), ("before", "b"), ("after", "a"), ("after", "b")]


def test_end_is_not_called_when_the_body_raises():
    c = tf.constant(1.0)
    hook = RecordingHook()
    with pytest.raises(ValueError, match="from the body"):
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            sess.run(c)
            raise ValueError("from the body")
    assert "end" not in hook.calls
    assert sess.should_stop()  # closed


def test_close_calls_end_once():
    hook = RecordingHook()
    tf.constant(1.0)
    sess = tf.train.MonitoredSession(hooks=[hook])
    assert not sess.should_stop()
    sess.close()
    assert hook.calls == ["begin", "after_create_session", "end"]
    assert sess.should_stop()
    with pytest.raises(RuntimeError, match="closed"):
        sess.run(tf.constant(2.0))


def test_run_args_fetches_arrive_in_run_values():
    a = tf.constant(2.0)
    b = tf.constant([1, 2, 3])
    hook_one = RecordingHook(fetches=a)
    hook_many = RecordingHook(fetches={"a": a, "pair": [a, b]})
    hook_none = RecordingHook()
    x = tf.placeholder(tf.float32, [])
    y = x * 10.0
    with tf.train.MonitoredSession(hooks=[hook_one, hook_many, hook_none]) as sess:
        assert sess.run(y, feed_dict={x: 1.5}) == 15.0
    assert hook_one.results == [2.0]
    (many,) = hook_many.results
    assert many["a"] == 2.0
    assert many["pair"][0] == 2.0
    np.testing.assert_array_equal(many["pair"][1], [1, 2, 3])
    assert hook_none.results == [None]
    # original_args: the caller's fetches and feeds.
    (args,) = hook_none.original_args
    assert args.fetches is y
    assert args.feed_dict == {x: 1.5}


def test_hook_feeds_reach_the_step():
    x = tf.placeholder(tf.float32, [], name="x")
    z = tf.placeholder(tf.float32, [], name="z")
    y = x + 1.0
    hook = RecordingHook(fetches=y, feed_dict={x: 41.0})
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        # The caller's fetch sees the hook's feed; the caller feeds something else.
        assert sess.run(y, feed_dict={z: 0.0}) == 42.0
        assert sess.run(y) == 42.0
    assert hook.results == [42.0, 42.0]


def test_same_tensor_fed_by_a_hook_and_the_user():
    x = tf.placeholder(tf.float32, [])
    y = x * 2.0
    hook = RecordingHook(feed_dict={x: 1.0})
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        with pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook and "
                                               "user."):
            sess.run(y, feed_dict={x: 2.0})


def test_same_tensor_fed_by_two_hooks():
    x = tf.placeholder(tf.float32, [])
    y = x * 2.0
    hooks = [RecordingHook(feed_dict={x: 1.0}), RecordingHook(feed_dict={x: 2.0})]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        with pytest.raises(RuntimeError, match="Same tensor is fed by two hooks."):
            sess.run(y)


def test_request_stop_from_a_hook():
    c = tf.constant(0)
    hook = RecordingHook(stop_after=3)
    steps = 0
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        while not sess.should_stop():
            sess.run(c)
            steps += 1
        assert steps == 3
        with pytest.raises(RuntimeError, match="Run called even after should_stop requested."):
            sess.run(c)
    assert hook.calls[-1] == "end"


def test_hook_preemption_error_recreates_the_session():
    # AbortedError in a step makes MonitoredSession make a new session (hooks told again by
    # after_create_session) and run the step again.
    c = tf.constant(5)

    class FailOnce(tf.train.SessionRunHook):
        failed = False

        def before_run(self, run_context):
            if not self.failed:
                self.failed = True
                raise tf.errors.AbortedError(None, None, "a ps task restarted")

    recorder = RecordingHook()
    with tf.train.MonitoredSession(hooks=[FailOnce(), recorder]) as sess:
        assert sess.run(c) == 5
    assert recorder.calls.count("after_create_session") == 2
    assert recorder.calls[-3:] == ["before_run", "after_run", "end"]


def test_singular_monitored_session_does_not_recover():
    c = tf.constant(5)

    class Fail(tf.train.SessionRunHook):
        def before_run(self, run_context):
            raise tf.errors.AbortedError(None, None, "a ps task restarted")

    with pytest.raises(tf.errors.AbortedError):
        with tf.train.SingularMonitoredSession(hooks=[Fail()]) as sess:
            sess.run(c)


def test_graph_property():
    graph = tf.get_default_graph()
    tf.constant(1)
    with tf.train.MonitoredSession() as sess:
        assert sess.graph is graph
    assert sess.graph is None  # closed


class CoordinatorHook(tf.train.SessionRunHook):
    """Starts a coordinated thread that reports an exception."""

    def after_create_session(self, session, coord):
        def body():
            with coord.stop_on_exception():
                raise ValueError("from a coordinated thread")

        self.thread = threading.Thread(target=body)
        coord.register_thread(self.thread)
        self.thread.start()
        self.thread.join(30)


def test_an_exception_reported_to_the_coordinator_ends_the_session():
    c = tf.constant(1)
    hook = CoordinatorHook()
    with pytest.raises(ValueError, match="from a coordinated thread"):
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            assert sess.should_stop()  # a recoverable session answers True...
    # ...and close() raised the exception.
    with pytest.raises(ValueError, match="from a coordinated thread"):
        with tf.train.SingularMonitoredSession(hooks=[CoordinatorHook()]) as sess:
            sess.should_stop()  # raises it here already
    del c


# ---- the global step ----

def test_global_step_helpers():
    assert tf.train.get_global_step() is None
    step = tf.train.get_or_create_global_step()
    assert step.name == "global_step:0"
    assert step.dtype.base_dtype == tf.int64
    assert step not in tf.trainable_variables()
    assert tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [step]
    assert tf.train.get_global_step() is step
    assert tf.train.get_or_create_global_step() is step
    with pytest.raises(ValueError, match='"global_step" already exists.'):
        tf.train.create_global_step()
    with tf.Session() as sess:
        sess.run(step.initializer)
        sess.run(tf.assign_add(step, 3))
        value = tf.train.global_step(sess, step)
    assert value == 3 and isinstance(value, int)
    with tf.Graph().as_default():
        with tf.variable_scope("inside"):
            other = tf.train.create_global_step()
        assert other.name == "global_step:0"  # at the root, whatever the scope


# ---- StopAtStepHook ----

def test_stop_at_step_hook_arguments():
    with pytest.raises(ValueError, match="One of num_steps or last_step must be specified."):
        tf.train.StopAtStepHook()
    with pytest.raises(ValueError, match="Only one of num_steps or last_step can be "
                                         "specified."):
        tf.train.StopAtStepHook(num_steps=3, last_step=5)


def test_stop_at_step_hook_needs_a_global_step():
    tf.constant(1)
    with pytest.raises(RuntimeError, match="Global step should be created to use "
                                           "StopAtStepHook."):
        tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(num_steps=1)])


def test_stop_at_step_hook_num_steps():
    step, train = _counter_model()
    runs = 0
    with tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(num_steps=4)]) as sess:
        while not sess.should_stop():
            last = sess.run(train)
            runs += 1
    assert runs == 4
    assert last == 4


def test_stop_at_step_hook_last_step():
    step, train = _counter_model()
    start = tf.assign(step, 7)
    scaffold = tf.train.Scaffold(init_fn=lambda scaffold, sess: sess.run(start))
    runs = 0
    hook = tf.train.StopAtStepHook(last_step=10)
    with tf.train.SingularMonitoredSession(hooks=[hook], scaffold=scaffold) as sess:
        assert sess.raw_session().run(step) == 7
        while not sess.should_stop():
            sess.run(train)
            runs += 1
        assert runs == 3
        assert sess.raw_session().run(step) == 10


def test_stop_at_step_hook_num_steps_counts_from_the_restored_step(tmp_path):
    step, train = _counter_model()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                           hooks=[tf.train.StopAtStepHook(num_steps=5)]) as sess:
        while not sess.should_stop():
            sess.run(train)
    tf.reset_default_graph()
    step, train = _counter_model()
    runs = 0
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                           hooks=[tf.train.StopAtStepHook(num_steps=3)]) as sess:
        while not sess.should_stop():
            runs += 1
            last = sess.run(train)
    assert runs == 3
    assert last == 8


# ---- checkpoints ----

def test_checkpoint_saver_hook_save_steps(tmp_path):
    step, train = _counter_model()
    tf.Variable(1.0, name="w")
    hooks = [tf.train.StopAtStepHook(last_step=5),
             tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2)]
    with tf.train.SingularMonitoredSession(hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(train)
    index_files = sorted(f for f in os.listdir(tmp_path) if f.endswith(".index"))
    # At creation (0), every 2 steps (2, 4), and at the end (5).
    assert index_files == ["model.ckpt-%d.index" % s for s in (0, 2, 4, 5)]
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-5")


def test_checkpoint_saver_hook_with_the_sessions_scaffold(tmp_path):
    step, train = _counter_model()
    scaffold = tf.train.Scaffold()
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1, scaffold=scaffold)
    with tf.train.SingularMonitoredSession(hooks=[hook], scaffold=scaffold) as sess:
        sess.run(train)
    assert tf.get_collection(tf.GraphKeys.SAVERS) == [scaffold.saver]
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-1")


def test_checkpoint_saver_hook_arguments(tmp_path):
    _counter_model()
    saver = tf.train.Saver()
    with pytest.raises(ValueError, match="You cannot provide both saver and scaffold."):
        tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1, saver=saver,
                                     scaffold=tf.train.Scaffold())
    with pytest.raises(ValueError):
        tf.train.CheckpointSaverHook(str(tmp_path))
    with pytest.raises(ValueError):
        tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1, save_secs=1)


def test_checkpoint_saver_listeners_all_called(tmp_path):
    step, train = _counter_model()
    events = []

    class Listener(tf.train.CheckpointSaverListener):
        def __init__(self, name, stop):
            self.name, self.stop = name, stop

        def begin(self):
            events.append((self.name, "begin"))

        def before_save(self, session, global_step_value):
            events.append((self.name, "before_save", global_step_value))

        def after_save(self, session, global_step_value):
            events.append((self.name, "after_save", global_step_value))
            return self.stop and global_step_value >= 1

        def end(self, session, global_step_value):
            events.append((self.name, "end", global_step_value))

    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1,
                                        listeners=[Listener("a", True), Listener("b", False)])
    runs = 0
    with tf.train.SingularMonitoredSession(hooks=[hook]) as sess:
        while not sess.should_stop():
            sess.run(train)
            runs += 1
    assert runs == 1  # listener a asked to stop after the save at step 1
    assert events == [("a", "begin"), ("b", "begin"),
                      ("a", "before_save", 0), ("b", "before_save", 0),
                      ("a", "after_save", 0), ("b", "after_save", 0),
                      ("a", "before_save", 1), ("b", "before_save", 1),
                      ("a", "after_save", 1), ("b", "after_save", 1),
                      ("a", "end", 1), ("b", "end", 1)]


def test_chief_restores_from_checkpoint_dir(tmp_path):
    ckpt = str(tmp_path / "ckpt")
    step, train = _counter_model()
    w = tf.Variable([1.0, 1.0], name="w")
    grow = tf.group(train, tf.assign_add(w, [1.0, 2.0]))
    with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_checkpoint_steps=100,
                                           hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
        while not sess.should_stop():
            sess.run(grow)
    # Saved at the end.
    assert tf.train.latest_checkpoint(ckpt).endswith("model.ckpt-3")

    # A new program (fresh graph): the chief restores, the global step continues.
    tf.reset_default_graph()
    step, train = _counter_model()
    w = tf.Variable([0.0, 0.0], name="w")
    with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_checkpoint_steps=100,
                                           hooks=[tf.train.StopAtStepHook(last_step=5)]) as sess:
        first = sess.run([step, w])
        assert first[0] == 3
        np.testing.assert_array_equal(first[1], [4.0, 7.0])
        steps = []
        while not sess.should_stop():
            steps.append(sess.run(train))
    assert steps == [4, 5]
    assert tf.train.latest_checkpoint(ckpt).endswith("model.ckpt-5")


def test_monitored_training_session_without_checkpoint_dir_needs_no_global_step():
    # TF adds its step counter and checkpoint hooks only with a checkpoint (summary)
    # directory; without one a graph with no global step trains.
    v = tf.Variable(1.0)
    inc = tf.assign_add(v, 1.0)
    with tf.train.MonitoredTrainingSession() as sess:
        assert sess.run(inc) == 2.0


def test_monitored_training_session_chief_only_hooks():
    c = tf.constant(1)
    chief_hook, worker_hook = RecordingHook(), RecordingHook()
    with tf.train.MonitoredTrainingSession(hooks=[worker_hook],
                                           chief_only_hooks=[chief_hook]) as sess:
        sess.run(c)
    assert chief_hook.calls[-1] == "end"
    assert worker_hook.calls[-1] == "end"


# ---- end of input ----

def test_out_of_range_inside_with_is_swallowed_and_closes():
    q = tf.FIFOQueue(10, tf.int32)
    fill = q.enqueue_many([[1, 2, 3]])
    close = q.close()
    item = q.dequeue()
    hook = RecordingHook()
    got = []
    # The graph has no variables: TF's chief still runs init_fn.
    scaffold = tf.train.Scaffold(init_fn=lambda scaffold, sess: (sess.run(fill),
                                                                 sess.run(close)))
    with tf.train.MonitoredSession(
            session_creator=tf.train.ChiefSessionCreator(scaffold=scaffold),
            hooks=[hook]) as sess:
        while not sess.should_stop():
            # Bounded: a queue left open would block the dequeue for ever.
            got.append(sess.run(item, options=tf.RunOptions(timeout_in_ms=30000)))
    assert got == [1, 2, 3]
    assert sess.should_stop()
    assert hook.calls[-1] == "end"  # a clean end


def test_out_of_range_outside_with_is_raised():
    q = tf.FIFOQueue(10, tf.int32)
    close = q.close()
    item = q.dequeue()
    sess = tf.train.MonitoredSession()
    try:
        sess.run(close)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(item)
    finally:
        sess.close()


def test_stop_iteration_inside_with_is_swallowed():
    c = tf.constant(1)
    with tf.train.MonitoredSession() as sess:
        sess.run(c)
        raise StopIteration
    assert sess.should_stop()


# ---- NaN, final ops, logging, step counter ----

def test_nan_tensor_hook_raises():
    loss = tf.placeholder(tf.float32, [])
    hook = tf.train.NanTensorHook(loss)
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        sess.run(loss, feed_dict={loss: 1.0})
        with pytest.raises(tf.train.NanLossDuringTrainingError,
                           match="NaN loss during training."):
            sess.run(loss, feed_dict={loss: np.nan})


def test_nan_tensor_hook_requests_stop_without_failing(caplog):
    loss = tf.placeholder(tf.float32, [])
    hook = tf.train.NanTensorHook(loss, fail_on_nan_loss=False)
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            sess.run(loss, feed_dict={loss: 1.0})
            assert not sess.should_stop()
            sess.run(loss, feed_dict={loss: np.nan})
            assert sess.should_stop()
    assert any("Model diverged with loss = NaN." in r.getMessage() for r in caplog.records
               if r.name == "tensorflow")


def test_final_ops_hook():
    v = tf.Variable(10, name="v")
    inc = tf.assign_add(v, 1)
    x = tf.placeholder(tf.int32, [])
    hook = tf.train.FinalOpsHook({"v": v.value(), "plus": v.value() + x},
                                 final_ops_feed_dict={x: 100})
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        sess.run(inc)
        sess.run(inc)
        assert hook.final_ops_values is None
    assert hook.final_ops_values == {"v": 12, "plus": 112}


def _tensorflow_messages(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "tensorflow"]


def test_logging_tensor_hook_every_n_iter(caplog):
    x = tf.placeholder(tf.int32, [])
    x_value = tf.identity(x, name="x_value")
    doubled = tf.multiply(x, 2, name="doubled")
    hook = tf.train.LoggingTensorHook({"x": x_value, "double": "doubled:0"}, every_n_iter=2)
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            for i in range(5):
                assert sess.run(doubled, feed_dict={x: i}) == 2 * i
    logged = [m for m in _tensorflow_messages(caplog) if m.startswith("double = ")]
    # Iterations 0, 2 and 4; tags in sorted order; the time since the last line after the
    # first.
    assert len(logged) == 3
    assert logged[0] == "double = 0, x = 0"
    assert logged[1].startswith("double = 4, x = 2 (")
    assert logged[1].endswith(" sec)")
    assert logged[2].startswith("double = 8, x = 4 (")


def test_logging_tensor_hook_names_and_at_end(caplog):
    a = tf.constant(7, name="seven")
    hook = tf.train.LoggingTensorHook(["seven"], at_end=True)
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            sess.run(a)
            sess.run(a)
            assert not [m for m in _tensorflow_messages(caplog) if "seven" in m]
    assert [m for m in _tensorflow_messages(caplog) if "seven" in m] == ["seven = 7"]


def test_logging_tensor_hook_formatter(caplog):
    a = tf.constant(3, name="three")
    hook = tf.train.LoggingTensorHook({"x": a}, every_n_iter=1,
                                      formatter=lambda values: "x is %d" % values["x"])
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            sess.run(a)
    assert "x is 3" in _tensorflow_messages(caplog)


def test_logging_tensor_hook_arguments():
    a = tf.constant(1)
    with pytest.raises(ValueError, match="either at_end and/or exactly one of every_n_iter "
                                         "and every_n_secs must be provided."):
        tf.train.LoggingTensorHook([a])
    with pytest.raises(ValueError):
        tf.train.LoggingTensorHook([a], every_n_iter=1, every_n_secs=1)
    with pytest.raises(ValueError, match="invalid every_n_iter=0."):
        tf.train.LoggingTensorHook([a], every_n_iter=0)


def test_step_counter_hook(caplog):
    step, train = _counter_model()
    hook = tf.train.StepCounterHook(every_n_steps=2)
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            for _ in range(5):
                sess.run(train)
    rates = [m for m in _tensorflow_messages(caplog) if m.startswith("global_step/sec: ")]
    # Triggered at steps 1 (start of the timing, nothing logged), 3 and 5.
    assert len(rates) == 2
    assert all(float(m.split(": ")[1]) > 0 for m in rates)


def test_step_counter_hook_arguments():
    with pytest.raises(ValueError, match="exactly one of every_n_steps and every_n_secs "
                                         "should be provided."):
        tf.train.StepCounterHook(every_n_steps=None, every_n_secs=None)
    with pytest.raises(ValueError):
        tf.train.StepCounterHook(every_n_steps=1, every_n_secs=1)


def test_second_or_step_timer():
    timer = tf.train.SecondOrStepTimer(every_steps=3)
    assert timer.should_trigger_for_step(1)
    assert timer.update_last_triggered_step(1) == (None, None)
    assert not timer.should_trigger_for_step(1)
    assert not timer.should_trigger_for_step(3)
    assert timer.should_trigger_for_step(4)
    secs, steps = timer.update_last_triggered_step(4)
    assert steps == 3 and secs >= 0
    assert timer.last_triggered_step() == 4
    with pytest.raises(ValueError):
        tf.train.SecondOrStepTimer()
    with pytest.raises(ValueError):
        tf.train.SecondOrStepTimer(every_secs=1, every_steps=1)


# ---- Scaffold ----

def test_scaffold_default_ops_and_finalized_graph():
    v = tf.Variable(1.0, name="v")
    lv = tf.Variable(2.0, name="lv", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    scaffold = tf.train.Scaffold()
    assert scaffold.init_op is None
    graph = tf.get_default_graph()
    with tf.train.MonitoredSession(
            session_creator=tf.train.ChiefSessionCreator(scaffold=scaffold)) as sess:
        assert graph.finalized
        with pytest.raises(RuntimeError):
            tf.constant(1.0)
        assert isinstance(scaffold.init_op, tf.Operation)
        assert isinstance(scaffold.ready_op, tf.Tensor)
        assert isinstance(scaffold.ready_for_local_init_op, tf.Tensor)
        assert isinstance(scaffold.local_init_op, tf.Operation)
        assert isinstance(scaffold.saver, tf.train.Saver)
        assert tf.get_collection(tf.GraphKeys.INIT_OP) == [scaffold.init_op]
        assert tf.get_collection(tf.GraphKeys.READY_OP) == [scaffold.ready_op]
        assert tf.get_collection(tf.GraphKeys.LOCAL_INIT_OP) == [scaffold.local_init_op]
        assert tf.get_collection(tf.GraphKeys.SAVERS) == [scaffold.saver]
        assert sess.run([v, lv]) == [1.0, 2.0]
    # TF unfinalizes at close a graph that was not finalized before.
    assert not graph.finalized


def test_scaffold_keeps_a_graph_finalized_before():
    tf.Variable(1.0)
    tf.train.Scaffold().finalize()
    graph = tf.get_default_graph()
    assert graph.finalized
    with tf.train.MonitoredSession():
        pass
    assert graph.finalized


def test_scaffold_init_fn_and_feed_dict():
    x = tf.placeholder(tf.float32, [], name="x")
    v = tf.Variable(x, name="v")
    w = tf.Variable(0.0, name="w")
    set_w = tf.assign(w, 5.0)
    called = []

    def init_fn(scaffold, sess):
        called.append(scaffold)
        sess.run(set_w)

    scaffold = tf.train.Scaffold(init_feed_dict={x: 3.0}, init_fn=init_fn)
    with tf.train.MonitoredSession(
            session_creator=tf.train.ChiefSessionCreator(scaffold=scaffold)) as sess:
        assert sess.run([v, w]) == [3.0, 5.0]
    assert called == [scaffold]


def test_scaffold_copy_from_scaffold():
    tf.Variable(1.0)
    init = tf.no_op(name="my_init")
    base = tf.train.Scaffold(init_op=init)
    copy = tf.train.Scaffold(copy_from_scaffold=base)
    assert copy.init_op is init
    with pytest.raises(TypeError, match="copy_from_scaffold is not a Scaffold instance."):
        tf.train.Scaffold(copy_from_scaffold=object())


def test_ready_op_reports_what_init_left_uninitialized():
    tf.Variable(1.0, name="kept_out")
    scaffold = tf.train.Scaffold(init_op=tf.no_op())
    with pytest.raises(RuntimeError, match="kept_out"):
        tf.train.MonitoredSession(
            session_creator=tf.train.ChiefSessionCreator(scaffold=scaffold))


# ---- SingularMonitoredSession and run_step_fn ----

def test_singular_monitored_session_raw_session_and_checkpoint_path(tmp_path):
    v = tf.Variable(3.0, name="v")
    saver = tf.train.Saver()
    path = str(tmp_path / "model")
    with tf.Session() as plain:
        plain.run(v.initializer)
        plain.run(v.assign(9.0))
        saver.save(plain, path)
    hook = RecordingHook()
    with tf.train.SingularMonitoredSession(hooks=[hook],
                                           checkpoint_filename_with_path=path) as sess:
        raw = sess.raw_session()
        assert isinstance(raw, tf.Session)
        assert raw.run(v) == 9.0      # restored, not initialized
        assert hook.calls == ["begin", "after_create_session"]  # raw runs skip hooks
        assert sess.run(v) == 9.0
        assert hook.calls[-1] == "after_run"


def test_run_step_fn():
    x = tf.placeholder(tf.float32, [])
    v = x + 4.0
    w = x + 0.5
    hook = RecordingHook()
    feeds = iter([0.0, 0.0, 0.5])
    results = []

    def step_fn(step_context):
        # A run without hooks on the raw session, then one with them.
        a = step_context.session.run(v, feed_dict={x: next(feeds)})
        if a >= 4.5:
            step_context.request_stop()
        return step_context.run_with_hooks(fetches=w, feed_dict={x: 0.1})

    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        while not sess.should_stop():
            results.append(sess.run_step_fn(step_fn))
    assert results == [pytest.approx(0.6), pytest.approx(0.6)]
    assert hook.calls.count("before_run") == 2
    # request_stop raised StopIteration, which the `with` swallowed: a clean close.
    assert hook.calls[-1] == "end"
    assert sess.should_stop()


def test_run_step_fn_request_stop_raises_stop_iteration():
    tf.constant(1)

    def step_fn(step_context):
        step_context.request_stop()

    sess = tf.train.MonitoredSession()
    try:
        with pytest.raises(StopIteration):
            sess.run_step_fn(step_fn)
        assert not sess.should_stop()
    finally:
        sess.close()


# ---- a worker waiting for its chief ----

def test_worker_waits_for_the_chief(monkeypatch):
    server = tf.train.Server.create_local_server()
    worker_waiting = threading.Event()
    worker_done = threading.Event()
    results, failures = {}, []

    real_not_ready = session_manager_lib.SessionManager._not_ready

    def not_ready(self, sess, op):
        missing = real_not_ready(self, sess, op)
        if missing and threading.current_thread().name == "worker":
            worker_waiting.set()
        return missing

    monkeypatch.setattr(session_manager_lib.SessionManager, "_not_ready", not_ready)

    def worker():
        try:
            with tf.Graph().as_default():
                step = tf.train.get_or_create_global_step()
                w = tf.Variable([0.0, 0.0], name="w")  # never run: the chief initializes
                add = tf.assign_add(w, [1.0, 1.0])
                with tf.train.MonitoredTrainingSession(master=server.target, is_chief=False,
                                                       max_wait_secs=60) as sess:
                    results["worker_saw"] = sess.run(w)
                    results["worker_added"] = sess.run(add)
                    results["worker_step"] = sess.run(step)
        except BaseException as e:  # noqa: BLE001 - reported by the test
            failures.append(e)
        finally:
            worker_done.set()

    def chief():
        try:
            if not worker_waiting.wait(60):
                raise AssertionError("the worker never waited")
            with tf.Graph().as_default():
                step = tf.train.get_or_create_global_step()
                w = tf.Variable([5.0, 6.0], name="w")
                with tf.train.MonitoredTrainingSession(master=server.target,
                                                       is_chief=True) as sess:
                    results["chief_saw"] = sess.run(w)
                    if not worker_done.wait(60):
                        raise AssertionError("the worker did not finish")
                    results["chief_after"] = sess.run([w, step])
        except BaseException as e:  # noqa: BLE001 - reported by the test
            failures.append(e)

    threads = [threading.Thread(target=worker, name="worker"),
               threading.Thread(target=chief, name="chief")]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not any(t.is_alive() for t in threads)
        if failures:
            raise failures[0]
        np.testing.assert_array_equal(results["chief_saw"], [5.0, 6.0])
        np.testing.assert_array_equal(results["worker_saw"], [5.0, 6.0])
        np.testing.assert_array_equal(results["worker_added"], [6.0, 7.0])
        assert results["worker_step"] == 0
        np.testing.assert_array_equal(results["chief_after"][0], [6.0, 7.0])
    finally:
        server.stop()
