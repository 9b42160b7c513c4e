"""Word-count corpora for the tests: files of random words, each with its own count, and a
gate among them: a named pipe (FIFO) that this process writes only when told to, so that a
test knows a map task is in the middle of its work, and which one."""

import os
import random
import threading
import time

FILES = 40
GATE_TEXT = "through the gate\n" * 1000


class Gate:
    """A FIFO among the inputs: whoever opens it to read waits until the gate is opened.

    A thread writes GATE_TEXT to every reader once open() is called, and records the pid of
    the first reader (the map task that took the gate)."""

    def __init__(self, path):
        self.path = str(path)
        os.mkfifo(self.path)
        self.opened = threading.Event()
        self.first_reader = threading.Event()
        self.reader_pid = None
        self.stopping = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _reader(self):
        target = os.path.realpath(self.path)
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                for fd in os.listdir("/proc/%s/fd" % entry):
                    if os.readlink("/proc/%s/fd/%s" % (entry, fd)) == target:
                        return int(entry)
            except OSError:
                continue
        return None

    def _serve(self):
        while not self.stopping:
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: nobody reads it yet
                time.sleep(0.005)
                continue
            if not self.first_reader.is_set():
                # The reader's open() returns, and its descriptor shows, just after ours.
                deadline = time.monotonic() + 5
                while self.reader_pid is None and time.monotonic() < deadline:
                    self.reader_pid = self._reader()
                self.first_reader.set()
            self.opened.wait()
            try:
                os.set_blocking(fd, True)
                os.write(fd, GATE_TEXT.encode())
            except OSError:  # the reader was killed
                pass
            finally:
                os.close(fd)
            time.sleep(0.05)  # let the reader see the end before the next open

    def close(self):
        self.stopping = True
        self.opened.set()
        self.thread.join()


def make_corpus(directory, gate_at):
    """(list file, gate, exact total): FILES files of random words, each with its own
    count, and the gate at position `gate_at` of the list."""
    rng = random.Random(7)
    vocabulary = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(1, 9)))
                  for _ in range(2000)]
    body = "\n".join(" ".join(rng.choices(vocabulary, k=12)) for _ in range(2000)) + "\n"
    paths, total = [], 0
    for i in range(FILES):
        path = directory / ("part-%03d.txt" % i)
        path.write_text(body + "extra " * i + "\n")  # every file's count differs
        paths.append(str(path))
        total += len(body.split()) + i
    gate = Gate(directory / "gate")
    paths.insert(gate_at, gate.path)
    total += len(GATE_TEXT.split())
    list_file = directory / "list"
    list_file.write_text("\n".join(paths) + "\n")
    return str(list_file), gate, total


