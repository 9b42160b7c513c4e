"""TF 1.x's Supervisor: the pre-MonitoredSession way to run a training cluster. It makes
the ops that ready a model (taking what the program gave), finalizes the graph, prepares
the chief's session or waits for the model on other workers, saves checkpoints from a
thread on the chief every save_model_secs, writes summaries (the summary op every
save_summaries_secs, the global step's rate, summary_computed) into logdir's event file from
the chief, runs queue runners, and stops them all together through its Coordinator."""

import contextlib
import os
import time

from tensorweave import _native
from tensorweave import errors
from tensorweave.framework import ops
from tensorweave.ops import control_flow_ops
from tensorweave.ops import variables
from tensorweave.summary import summary as summary_lib
from tensorweave.summary import writer as writer_lib
from tensorweave.training import saver as saver_lib
from tensorweave.training import training_util
from tensorweave.training.coordinator import Coordinator, LooperThread
from tensorweave.training.session_manager import SessionManager


class Supervisor:
    USE_DEFAULT = 0

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT,
                 is_chief=True, init_op=USE_DEFAULT, init_feed_dict=None,
                 local_init_op=USE_DEFAULT, logdir=None, summary_op=USE_DEFAULT,
                 saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120,
                 checkpoint_basename="model.ckpt", session_manager=None,
                 summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        self._graph = graph or ops.get_default_graph()
        with self._graph.as_default():
            D = Supervisor.USE_DEFAULT  # noqa: N806
            self._ready_op = variables.report_uninitialized_variables() \
                if ready_op is D else ready_op
            self._ready_for_local_init_op = (
                variables.report_uninitialized_variables(variables.global_variables())
                if ready_for_local_init_op is D else ready_for_local_init_op)
            self._is_chief = is_chief
            self._init_op = variables.global_variables_initializer() \
                if init_op is D and is_chief else (None if init_op is D else init_op)
            self._init_feed_dict = init_feed_dict
            self._local_init_op = control_flow_ops.group(
                variables.local_variables_initializer()) \
                if local_init_op is D else local_init_op
            self._logdir = logdir
            self._saver = None
            if saver is D:
                savers = ops.get_collection(ops.GraphKeys.SAVERS)
                saver = savers[0] if savers else (
                    saver_lib.Saver(allow_empty=True) if variables.global_variables() else None)
            self._saver = saver
            if self._saver is not None and logdir and is_chief:
                self._saver.build(logdir)
            self._global_step = training_util.get_global_step(self._graph) \
                if global_step is D else global_step
            # Summaries, as TF: the merged summaries of the graph by default, written by the
            # chief into logdir's event file.
            self._summary_op = summary_lib.merge_all() if summary_op is D else summary_op
            if summary_writer is D:
                summary_writer = writer_lib.FileWriter(logdir) if (is_chief and logdir) \
                    else None
            self._summary_writer = summary_writer
            self._save_summaries_secs = save_summaries_secs
            self._save_model_secs = save_model_secs
            self._stop_grace_secs = stop_grace_secs
            self._save_path = os.path.join(logdir, checkpoint_basename) if logdir else None
            self._init_fn = init_fn
            self._session_manager = session_manager or SessionManager(
                local_init_op=self._local_init_op, ready_op=self._ready_op,
                ready_for_local_init_op=self._ready_for_local_init_op, graph=self._graph,
                recovery_wait_secs=min(recovery_wait_secs, _native.MODEL_READY_POLL_SECS),
                local_init_run_options=local_init_run_options)
        self._graph.finalize()
        self._coord = Coordinator()
        self._started_threads = []

    is_chief = property(lambda self: self._is_chief)
    coord = property(lambda self: self._coord)
    saver = property(lambda self: self._saver)
    global_step = property(lambda self: self._global_step)
    session_manager = property(lambda self: self._session_manager)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    save_path = property(lambda self: self._save_path)
    save_model_secs = property(lambda self: self._save_model_secs)
    summary_op = property(lambda self: self._summary_op)
    summary_writer = property(lambda self: self._summary_writer)
    save_summaries_secs = property(lambda self: self._save_summaries_secs)
    logdir = property(lambda self: self._logdir)
    graph = property(lambda self: self._graph)

    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False,
                                    max_wait_secs=7200, start_standard_services=True):
        """The chief prepares the model (restoring logdir's latest checkpoint, or running
        the init op) and starts the checkpoint thread; other workers wait for it."""
        self._coord.clear_stop()
        if self._is_chief:
            init_fn = (lambda sess: self._init_fn(sess)) if self._init_fn else None
            sess = self._session_manager.prepare_session(
                master, init_op=self._init_op, saver=self._saver, checkpoint_dir=self._logdir,
                wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
                config=config, init_feed_dict=self._init_feed_dict, init_fn=init_fn)
            if start_standard_services:
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config,
                                                          max_wait_secs=max_wait_secs)
        if start_standard_services:  # as TF: on every task, the graph's queue runners
            self.start_queue_runners(sess)
        return sess

    def start_standard_services(self, sess):
        """On the chief with a logdir and a saver: a thread saving a checkpoint every
        save_model_secs."""
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. Because "
                               "only chief supervisors can write events.")
        threads = []
        if self._summary_writer is not None:
            self._summary_writer.add_graph(self._graph)
            if self._save_summaries_secs:
                if self._summary_op is not None:
                    threads.append(self.loop(self._save_summaries_secs, self._write_summary,
                                             args=(sess,)))
                if self._global_step is not None:
                    threads.append(self.loop(self._save_summaries_secs, self._write_step_rate,
                                             args=(sess, [None, None])))
        if self._logdir and self._saver is not None and self._save_model_secs:
            threads.append(self.loop(self._save_model_secs, self._save, args=(sess,)))
        return threads

    def _write_summary(self, sess):
        if self._coord.should_stop():
            return
        if self._global_step is not None:
            summary, step = sess.run([self._summary_op, self._global_step])
        else:
            summary, step = sess.run(self._summary_op), None
        self.summary_computed(sess, summary, global_step=step)

    def _write_step_rate(self, sess, last):
        """"<global step's name>/sec" since the last call (the first call only starts the
        clock), as TF's SVStepCounterThread."""
        if self._coord.should_stop():
            return
        step, now = int(sess.run(self._global_step)), time.time()
        if last[0] is not None and now > last[1]:
            rate = (step - last[0]) / (now - last[1])
            # The writer's one-value summary, as StepCounterHook writes its rate.
            self._summary_writer._add_scalar("%s/sec" % self._global_step.op.name, rate, step)
        last[0], last[1] = step, now

    def summary_computed(self, sess, summary, global_step=None):
        """Writes `summary` (a serialized Summary or a Summary) at `global_step` (the
        global step's value when None and there is one)."""
        if self._summary_writer is None:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self._global_step is not None:
            global_step = int(sess.run(self._global_step))
        self._summary_writer.add_summary(summary, global_step)

    def wait_for_stop(self):
        self._coord.wait_for_stop()

    def _save(self, sess):
        if self._coord.should_stop():
            return
        self._saver.save(sess, self._save_path, global_step=self._global_step)

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Runs target(*args) every timer_interval_secs on a thread until stop()."""
        thread = LooperThread(self._coord, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        thread.start()
        self._started_threads.append(thread)
        return thread

    Loop = loop  # noqa: N815 (TF's second name)

    def start_queue_runners(self, sess, queue_runners=None):
        if queue_runners is None:
            queue_runners = self._graph.get_collection(ops.GraphKeys.QUEUE_RUNNERS)
        threads = []
        for qr in queue_runners:
            threads.extend(qr.create_threads(sess, coord=self._coord, daemon=True, start=True))
        self._started_threads.extend(threads)
        return threads

    def should_stop(self):
        return self._coord.should_stop()

    def request_stop(self, ex=None):
        self._coord.request_stop(ex=ex)

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Stops every thread the supervisor started (and `threads`), re-raising an
        exception one of them reported."""
        self._coord.request_stop()
        try:
            self._coord.join(self._started_threads + list(threads or []),
                             stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            self._started_threads = []
            if close_summary_writer and self._summary_writer is not None:
                self._summary_writer.close()

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True,
                        close_summary_writer=True):
        """A prepared session, closed (and the services stopped) on exit; OutOfRangeError
        inside ends it cleanly, any other error is re-raised after stopping."""
        sess = self.prepare_or_wait_for_session(master, config=config,
                                                start_standard_services=start_standard_services)
        try:
            yield sess
        except Exception as e:  # noqa: BLE001 - reported to the coordinator, as TF does
            self.request_stop(e)
        finally:
            try:
                self.stop()  # re-raises what a thread, or the body, reported
            finally:
                try:
                    sess.close()
                except errors.OpError:
                    pass

