"""TF 1.x's SessionManager: sessions whose model is ready, made by the chief or awaited by
the other workers.

The policy is the C++ one (tensorweave/train/session_policy.h), shared with the C++
MonitoredTrainingSession: the chief keeps a model every variable of which a ps task still
holds (TF restores the checkpoint over it), else restores the latest checkpoint, else
initializes; waiting workers poll every `recovery_wait_secs` (by default the policy's 0.2 s;
TF's is 30 s) until the model is ready, logging every 10 s what they wait for, and a poll
that meets a restarted or lost task (AbortedError, UnavailableError) is retried in a new
session."""


from tensorweave import _native
from tensorweave.client.session import Session
from tensorweave.framework import ops
from tensorweave.platform import tf_logging as logging


def _names(values):
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


class SessionManager:
    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None,
                 graph=None, recovery_wait_secs=None, local_init_run_options=None,
                 local_init_feed_dict=None):
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph or ops.get_default_graph()
        self._recovery_wait_secs = (_native.MODEL_READY_POLL_SECS if recovery_wait_secs is None
                                    else recovery_wait_secs)
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

    def _latest_checkpoint(self, checkpoint_dir, checkpoint_filename_with_path,
                           wait_for_checkpoint, max_wait_secs):
        path = checkpoint_filename_with_path
        if path is None and checkpoint_dir:
            path = _native.wait_for_checkpoint(
                checkpoint_dir, max_wait_secs if wait_for_checkpoint else 0,
                self._recovery_wait_secs)
        return path

    def _prepare(self, sess, model_ready, saver, path, init_op, init_feed_dict, init_fn):
        """Keeps, restores or initializes the model as the policy says: whether restored."""
        action = _native.chief_preparation(
            model_ready, path is not None and saver is not None,
            restores_input=saver is not None and saver._saves_iterators())
        if action == "restore":
            saver.restore(sess, path)
            logging.info("Restored the model from %s", path)
            return True
        if action == "initialize":
            if init_op is not None:
                sess.run(init_op, feed_dict=init_feed_dict)
            if init_fn is not None:
                init_fn(sess)
        return False

    def _model_ready(self, sess):
        """Whether every variable is initialized; False when nothing can tell (no ready
        op, or no variables)."""
        return (self._ready_op is not None and
                bool(self._graph.get_collection(ops.GraphKeys.GLOBAL_VARIABLES)) and
                not self._not_ready(sess, self._ready_op))

    def recover_session(self, master, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None):
        """A session with the model kept or the latest checkpoint restored: (session,
        whether the model is ready without initialization)."""
        sess = self._new_session(master, config)
        try:
            path = self._latest_checkpoint(checkpoint_dir, checkpoint_filename_with_path,
                                           wait_for_checkpoint, max_wait_secs)
            model_ready = self._model_ready(sess)
            restored = self._prepare(sess, model_ready, saver, path, None, None, None)
            return sess, model_ready or restored
        except BaseException:
            sess.close()
            raise

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, init_feed_dict=None, init_fn=None):
        """The chief's session: kept, restored, or initialized; RuntimeError when the model
        is still not ready after that."""
        sess = self._new_session(master, config)
        try:
            path = self._latest_checkpoint(checkpoint_dir, checkpoint_filename_with_path,
                                           wait_for_checkpoint, max_wait_secs)
            self._prepare(sess, self._model_ready(sess), saver, path, init_op, init_feed_dict,
                          init_fn)
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
        holder = [self._new_session(master, config)]

        def not_ready():
            done, missing = self._try_local_init(holder[0])
            return self._not_ready(holder[0], self._ready_op) if done else missing

        def remake():
            holder[0].close()
            holder[0] = self._new_session(master, config)

        try:
            _native.wait_for_model_ready(not_ready, remake, max_wait_secs,
                                         self._recovery_wait_secs)
            return holder[0]
        except BaseException:
            holder[0].close()
            raise
