"""TF 1.x's tf.summary.FileWriter and FileWriterCache over the C++ EventFileWriter
(tensorweave/summary.h): event files that `tensorboard --logdir` reads."""

import atexit
import threading

import numpy as np

from tensorweave import _native

# SessionLog.SessionStatus (event.proto).
_SESSION_LOG_START = 1


def _as_summary_bytes(summary):
    """A serialized Summary from what TF's add_summary takes: the bytes a summary op
    evaluates to, or a message object with SerializeToString."""
    if isinstance(summary, np.ndarray) and summary.size == 1:
        summary = summary.item()
    if isinstance(summary, (bytes, np.bytes_)):
        return bytes(summary)
    serialize = getattr(summary, "SerializeToString", None)
    if serialize is not None:
        return serialize()
    raise TypeError("add_summary expects a serialized Summary (bytes) or a Summary message, "
                    "got %r" % (type(summary),))


class FileWriter:
    """Writes Summaries (and the graph) into an event file in `logdir`, made at
    construction. Events reach the file every `max_queue` events, at the first event
    `flush_secs` after the last write, at flush() and at close(). Thread-safe."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        if session is not None:
            raise NotImplementedError(
                "FileWriter(session=...) writes through summary ops of a session, which "
                "tensorweave does not have; give a logdir only")
        self._logdir = str(logdir)
        self._max_queue = int(max_queue)
        self._flush_secs = float(flush_secs)
        self._suffix = filename_suffix or ""
        self._lock = threading.Lock()
        self._writer = self._open()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def _open(self):
        return _native.EventFileWriter(self._logdir, self._max_queue, self._flush_secs,
                                       self._suffix)

    def get_logdir(self):
        return self._logdir

    def _live_writer(self):
        # As TF's EventFileWriter: events given after close() are dropped.
        with self._lock:
            return self._writer

    def add_summary(self, summary, global_step=None):
        """Writes `summary` (serialized Summary bytes, e.g. what session.run gives for a
        summary op, or a Summary message) at `global_step` (0 when None)."""
        data = _as_summary_bytes(summary)
        writer = self._live_writer()
        if writer is not None:
            writer.add_summary(data, int(global_step or 0))

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Writes the graph for TensorBoard's graph view: node names, ops, inputs and
        devices (tensorweave's node attributes are not TensorFlow's and are left out)."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        data = graph.as_graph_def() if graph is not None else graph_def
        if not isinstance(data, (bytes, np.bytes_)):
            data = data.SerializeToString()
        writer = self._live_writer()
        if writer is not None:
            writer.add_graph(bytes(data), int(global_step or 0))

    def _add_session_start(self, global_step):
        writer = self._live_writer()
        if writer is not None:
            writer.add_session_log(_SESSION_LOG_START, int(global_step or 0))

    def _add_scalar(self, tag, value, global_step):
        """A one-value Summary, for values computed outside the graph (StepCounterHook)."""
        writer = self._live_writer()
        if writer is not None:
            writer.add_scalar(tag, float(value), int(global_step or 0))

    def flush(self):
        writer = self._live_writer()
        if writer is not None:
            writer.flush()

    def close(self):
        with self._lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()

    def reopen(self):
        """After close(): a new event file in the same directory."""
        with self._lock:
            if self._writer is None:
                self._writer = self._open()

    def __enter__(self):
        return self

    def __exit__(self, *unused):
        self.close()


class FileWriterCache:
    """One FileWriter per directory for the whole process (TF's SummaryWriterCache), so
    that hooks writing into one directory share its event file."""

    _cache = {}
    _lock = threading.Lock()

    @staticmethod
    def get(logdir):
        with FileWriterCache._lock:
            writer = FileWriterCache._cache.get(logdir)
            if writer is None:
                writer = FileWriter(logdir)
                FileWriterCache._cache[logdir] = writer
            return writer

    @staticmethod
    def clear():
        with FileWriterCache._lock:
            writers = list(FileWriterCache._cache.values())
            FileWriterCache._cache = {}
        for writer in writers:
            writer.close()


# Pending events of the shared writers reach their files when the program ends.
atexit.register(FileWriterCache.clear)
