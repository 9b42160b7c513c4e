"""The hook protocol of MonitoredSession, as TF 1.x's session_run_hook: a hook sees the
session being made, adds fetches, feeds and options to each step, looks at their values,
and may ask training to stop."""

import collections


class SessionRunHook:
    """Subclass and override what you need; every method does nothing by default."""

    def begin(self):
        """Once, before the graph is finalized: the hook may still add ops."""

    def after_create_session(self, session, coord):
        """Each time a session is made (again, after a ps task failed), once the model is
        ready; the graph is finalized."""

    def before_run(self, run_context):
        """Returns None or SessionRunArgs to add to the step."""
        return None

    def after_run(self, run_context, run_values):
        """run_values.results holds the values of what before_run asked for."""

    def end(self, session):
        """When the monitored session closes normally (not after an error)."""


class SessionRunArgs(collections.namedtuple("SessionRunArgs",
                                            ["fetches", "feed_dict", "options"])):
    """What a hook adds to a step: fetches (any structure Session.run takes), feeds and
    RunOptions."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunContext:
    """The step being run: the caller's arguments and the session; request_stop() ends
    training after this step."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        return self._original_args

    @property
    def session(self):
        return self._session

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        self._stop_requested = True


class SessionRunValues(collections.namedtuple("SessionRunValues",
                                              ["results", "options", "run_metadata"])):
    """The values of a hook's fetches, with the step's options and metadata."""
