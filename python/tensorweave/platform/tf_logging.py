"""TF 1.x's `tf.logging`: the standard `logging` module's logger named "tensorflow".

Contracts, as TF 1.x's tf_logging:

- Levels are the `logging` module's: DEBUG=10, INFO=20, WARN=WARNING=30, ERROR=40,
  FATAL=50. `set_verbosity(level)` sets the "tensorflow" logger's level;
  `get_verbosity()` is its effective level, WARN (the root logger's) until set.
- The first use configures the logger once (`get_logger()`): unless the root logger already
  has handlers (the program configured logging itself, so no double logging), it gets a
  handler writing `LEVEL:tensorflow:message` (logging.BASIC_FORMAT) to stderr; in an
  interactive interpreter it writes to stdout and the level becomes INFO. Records also
  propagate to the root logger. Their file, line and function are the caller's, not this
  module's.
- `debug/info/warning/warn/error/fatal(msg, *args, **kwargs)` and `log(level, msg, ...)`
  log as `logging.Logger` does (%-style args applied lazily). `fatal` only logs, at FATAL
  (as in TF, it neither raises nor exits). `vlog(level, msg, *args)` is `log`.
- `log_every_n(level, msg, n, *args)` logs on the 1st, (n+1)th, (2n+1)th... call from one
  source line; `log_first_n(level, msg, n, *args)` on the first n calls from one line;
  `log_if(level, msg, condition, *args)` when `condition` is true. The counts are per
  (file, line) of the caller and shared by all threads (counting is not locked, as in TF).
"""

import logging as _logging
import os as _os
import sys as _sys
import threading as _threading
import traceback as _traceback

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARN
WARNING = _logging.WARNING
ERROR = _logging.ERROR
FATAL = _logging.FATAL

__all__ = ["DEBUG", "INFO", "WARN", "WARNING", "ERROR", "FATAL", "get_logger",
           "set_verbosity", "get_verbosity", "debug", "info", "warning", "warn", "error",
           "fatal", "log", "vlog", "log_if", "log_every_n", "log_first_n",
           "TaskLevelStatusMessage", "flush"]

_logger = None
_logger_lock = _threading.Lock()
_log_counter_per_token = {}

# Frames of these files are skipped when a record looks for its caller.
_SKIPPED_FILES = frozenset(_os.path.normcase(f) for f in (
    _logging.addLevelName.__code__.co_filename,  # the logging module's own _srcfile
    __file__))


def _find_caller(stack_info=False, stacklevel=1):
    """Logger.findCaller for the "tensorflow" logger: the first frame outside `logging` and
    this module."""
    frame = _sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if _os.path.normcase(code.co_filename) not in _SKIPPED_FILES:
            sinfo = None
            if stack_info:
                sinfo = "Stack (most recent call last):\n" + "".join(
                    _traceback.format_stack(frame)).rstrip("\n")
            return code.co_filename, frame.f_lineno, code.co_name, sinfo
        frame = frame.f_back
    return "(unknown file)", 0, "(unknown function)", None


def get_logger():
    """The "tensorflow" logger, given its handler on first use (see the module's doc)."""
    global _logger
    if _logger is not None:
        return _logger
    with _logger_lock:
        if _logger is not None:
            return _logger
        logger = _logging.getLogger("tensorflow")
        logger.findCaller = _find_caller
        if not _logging.getLogger().handlers:
            interactive = hasattr(_sys, "ps1") or bool(_sys.flags.interactive)
            if interactive:
                logger.setLevel(INFO)
            handler = _logging.StreamHandler(_sys.stdout if interactive else _sys.stderr)
            handler.setFormatter(_logging.Formatter(_logging.BASIC_FORMAT, None))
            logger.addHandler(handler)
        _logger = logger
        return _logger


def set_verbosity(v):
    """Logs at level `v` and above from now on."""
    get_logger().setLevel(v)


def get_verbosity():
    """The effective level: WARN unless set (or unless the root logger's level changed)."""
    return get_logger().getEffectiveLevel()


def log(level, msg, *args, **kwargs):
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs):
    get_logger().debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    get_logger().info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    get_logger().warning(msg, *args, **kwargs)


def warn(msg, *args, **kwargs):
    get_logger().warning(msg, *args, **kwargs)


def error(msg, *args, **kwargs):
    get_logger().error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs):
    """Logs at FATAL; does not exit (TF 1.x's behaviour)."""
    get_logger().fatal(msg, *args, **kwargs)


def vlog(level, msg, *args, **kwargs):
    """TF's vlog: `log(level, ...)`."""
    get_logger().log(level, msg, *args, **kwargs)


def log_if(level, msg, condition, *args):
    if condition:
        vlog(level, msg, *args)


def _caller_token():
    """(file, line) of the first frame outside this module."""
    frame = _sys._getframe(1)
    while frame is not None:
        if _os.path.normcase(frame.f_code.co_filename) not in _SKIPPED_FILES:
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
    return "<unknown>", 0


def _next_count(token):
    """0 on the first call with `token`, then 1, 2, ..."""
    _log_counter_per_token[token] = 1 + _log_counter_per_token.get(token, -1)
    return _log_counter_per_token[token]


def log_every_n(level, msg, n, *args):
    """Logs on the 1st call from this line and every n-th after it."""
    count = _next_count(_caller_token())
    log_if(level, msg, not count % n, *args)


def log_first_n(level, msg, n, *args):
    """Logs on the first n calls from this line."""
    count = _next_count(_caller_token())
    log_if(level, msg, count < n, *args)


def TaskLevelStatusMessage(msg):  # noqa: N802
    error(msg)


def flush():
    raise NotImplementedError()
