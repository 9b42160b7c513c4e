"""TF 1.x's Coordinator: threads that stop together, and the first exception reported by
any of them re-raised by join()."""

import contextlib
import sys
import threading
import time

from tensorweave import errors
from tensorweave.platform import tf_logging as _log


class Coordinator:
    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads = set()

    def request_stop(self, ex=None):
        """Asks every thread to stop. An exception (or exc_info triple) given here, unless
        it is a clean stop, is what join() raises; as TF, only one given while no stop was
        requested yet counts, and one given after join() is raised at once."""
        with self._lock:
            if ex is not None:
                exc_info = ex if isinstance(ex, tuple) else (type(ex), ex, ex.__traceback__)
                if issubclass(exc_info[0], self._clean_stop_exception_types):
                    exc_info = None
            else:
                exc_info = None
            if self._joined:
                if exc_info is not None:
                    raise exc_info[1].with_traceback(exc_info[2])
                return
            if not self._stop_event.is_set():
                if exc_info is not None and self._exc_info_to_raise is None:
                    _log.info("Error reported to Coordinator: %s", exc_info[1],
                              exc_info=exc_info)
                    self._exc_info_to_raise = exc_info
                self._stop_event.set()

    def clear_stop(self):
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self):
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        try:
            yield
        except BaseException:  # noqa: BLE001 - TF's bare except: reported to the coordinator
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None):
        return self._stop_event.wait(timeout)

    def register_thread(self, thread):
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for `threads` (and the registered ones) after a stop was requested; raises
        the reported exception, or RuntimeError naming threads still alive after the grace
        period."""
        with self._lock:  # threads registered after this call are not joined
            threads = list(set(threads or []) | self._registered_threads)
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for t in threads:
            if t.ident is not None:  # a thread never started is not alive: nothing to join
                t.join(max(0.0, deadline - time.monotonic()))
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                _, ex, tb = self._exc_info_to_raise
                raise ex.with_traceback(tb)
        if stragglers:
            if ignore_live_threads:
                _log.info("Coordinator stopped with threads still running: %s",
                          " ".join(stragglers))
            else:
                raise RuntimeError("Coordinator stopped with threads still running: %s" %
                                   " ".join(stragglers))

    @property
    def joined(self):
        return self._joined

    def raise_requested_exception(self):
        with self._lock:
            if self._exc_info_to_raise:
                _, ex, tb = self._exc_info_to_raise
                raise ex.with_traceback(tb)


class LooperThread(threading.Thread):
    """Runs `target(*args, **kwargs)` (or an override of run_loop()) every
    `timer_interval_secs`, back to back when it is None, until the coordinator stops;
    start_loop() and stop_loop() run before and after. As TF: a daemon thread registered
    with the coordinator, to which it reports its exceptions."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError("'coord' argument must be a Coordinator: %s" % coord)
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        if self._target:
            self._args = args or ()
            self._kwargs = kwargs or {}
        elif args or kwargs:
            raise ValueError("'args' and 'kwargs' argument require that you also pass "
                             "'target'")
        self._coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a LooperThread calling `target` and returns it."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.time()  # the first call is at once
                while not self._coord.wait_for_stop(max(0.0, next_time - time.time())):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Called once before the loop."""

    def stop_loop(self):
        """Called once after the loop."""

    def run_loop(self):
        """Called at each tick: calls target by default."""
        if self._target:
            self._target(*self._args, **self._kwargs)
