"""TF 1.x's SessionManager: sessions whose model is ready, made by the chief (restore the
latest checkpoint, or initialize) or awaited by the other workers.

As the C++ MonitoredTrainingSession does, the chief keeps the model a ps task still holds
when no checkpoint exists and every variable is initialized (TF would initialize it again),
and waiting workers poll every `recovery_wait_secs` (TF's default 30 s; 0.5 s here, so a
worker starts as soon as the chief is done) while logging every 10 s what they wait for."""

import time

from tensorweave import errors
from tensorweave.client.session import Session
from tensorweave.framework import ops
from tensorweave.platform import tf_logging as logging
from tensorweave.training import saver as saver_lib

_LOG_EVERY_SECS = 10.0


def _names(values):
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


class SessionManager:
    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None,
                 graph=None, recovery_wait_secs=0.5, local_init_run_options=None,
                 local_init_feed_dict=None):
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph or ops.get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict

    def _not_ready(self, sess, op):
        """The names `op` reports uninitialized; [] without an op."""
        return [] if op is None else _names(sess.run(op))

    def _try_local_init(self, sess):
        """Runs the local init op once the global variables are ready: (done, missing)."""
        missing = self._not_ready(sess, self._ready_for_local_init_op)
        if missing:
            return False, missing
        if self._local_init_op is not None:
            sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict,
                     options=self._local_init_run_options)
        return True, []

    def _new_session(self, master, config):
        return Session(master, graph=self._graph, config=config)

    def recover_session(self, master, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None):
        """A session with the latest checkpoint restored: (session, whether one was)."""
        sess = self._new_session(master, config)
        try:
            path = checkpoint_filename_with_path
            if path is None and checkpoint_dir:
                path = saver_lib.latest_checkpoint(checkpoint_dir)
                deadline = time.monotonic() + max_wait_secs
                while path is None and wait_for_checkpoint and time.monotonic() < deadline:
                    time.sleep(self._recovery_wait_secs)
                    path = saver_lib.latest_checkpoint(checkpoint_dir)
            if path is None or saver is None:
                return sess, False
            saver.restore(sess, path)
            logging.info("Restored the model from %s", path)
            return sess, True
        except BaseException:
            sess.close()
            raise

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, init_feed_dict=None, init_fn=None):
        """The chief's session: restored, or initialized; RuntimeError when the model is
        still not ready after that."""
        sess, restored = self.recover_session(master, saver, checkpoint_dir,
                                              checkpoint_filename_with_path,
                                              wait_for_checkpoint, max_wait_secs, config)
        try:
            # The model a ps task still holds is kept; without a ready op, or without
            # variables, nothing tells an initialized model: initialize (as TF).
            if not restored and (init_op is not None or init_fn is not None) and (
                    self._ready_op is None or
                    not self._graph.get_collection(ops.GraphKeys.GLOBAL_VARIABLES) or
                    self._not_ready(sess, self._ready_op)):
                if init_op is not None:
                    sess.run(init_op, feed_dict=init_feed_dict)
                if init_fn is not None:
                    init_fn(sess)
            done, missing = self._try_local_init(sess)
            if not done:
                raise RuntimeError("Init operations did not make model ready for local_init. "
                                   "Variables not initialized: %s" % ", ".join(missing))
            missing = self._not_ready(sess, self._ready_op)
            if missing:
                raise RuntimeError("Init operations did not make model ready. Variables not "
                                   "initialized: %s" % ", ".join(missing))
            return sess
        except BaseException:
            sess.close()
            raise

    def wait_for_session(self, master, config=None, max_wait_secs=float("inf")):
        """A worker's session, once the chief made the model ready; DeadlineExceededError
        after max_wait_secs."""
        sess = self._new_session(master, config)
        try:
            deadline = time.monotonic() + max_wait_secs
            next_log = time.monotonic() + _LOG_EVERY_SECS
            while True:
                done, missing = self._try_local_init(sess)
                if done:
                    missing = self._not_ready(sess, self._ready_op)
                    if not missing:
                        return sess
                now = time.monotonic()
                if now >= deadline:
                    raise errors.DeadlineExceededError(
                        None, None, "Session was not ready after waiting %d secs: variables "
                        "not initialized: %s" % (max_wait_secs, ", ".join(missing)))
                if now >= next_log:
                    logging.info("Waiting for model to be ready. Variables not initialized: "
                                 "%s", ", ".join(missing))
                    next_log = now + _LOG_EVERY_SECS
                time.sleep(self._recovery_wait_secs)
        except BaseException:
            sess.close()
            raise
