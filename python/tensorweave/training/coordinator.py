"""TF 1.x's Coordinator: threads that stop together, and the first exception reported by
any of them re-raised by join()."""

import contextlib
import sys
import threading
import time

from tensorweave import errors


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
        it is a clean stop, is what join() raises; only the first one counts."""
        with self._lock:
            if self._joined:
                return
            if ex is not None and self._exc_info_to_raise is None:
                if isinstance(ex, tuple):
                    exc_info = ex
                else:
                    exc_info = (type(ex), ex, ex.__traceback__)
                if not issubclass(exc_info[0], self._clean_stop_exception_types):
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
        except Exception:  # noqa: BLE001 - reported to the coordinator, as TF does
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
        threads = set(threads or []) | self._registered_threads
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                _, ex, tb = self._exc_info_to_raise
                raise ex.with_traceback(tb)
        if stragglers and not ignore_live_threads:
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
    """Runs `target(*args)` every `timer_interval_secs` until the coordinator stops."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        super().__init__(daemon=True)
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        self._args = args or ()
        self._kwargs = kwargs or {}
        coord.register_thread(self)

    def run(self):
        with self._coord.stop_on_exception():
            while not self._coord.should_stop():
                self._target(*self._args, **self._kwargs)
                if self._coord.wait_for_stop(self._timer_interval_secs):
                    break
