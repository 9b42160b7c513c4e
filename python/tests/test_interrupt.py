"""Ctrl-C in a blocked Session.run raises KeyboardInterrupt promptly, cancels the step, and
leaves the session usable; the GIL is released while a step runs."""

import signal
import subprocess
import sys
import textwrap
import threading
import time

import tensorweave.compat.v1 as tf

from conftest import python_env

CHILD = textwrap.dedent("""
    import sys, time
    import tensorweave.compat.v1 as tf
    local = sys.argv[1] == "local"
    server = None if local else tf.train.Server.create_local_server()
    q = tf.FIFOQueue(1, [tf.int32], shared_name="q")
    take, put = q.dequeue(), q.enqueue(5)
    sess = tf.Session("" if local else server.target)
    for attempt in range(2):
        try:  # the signal may land anywhere from here on
            print("ready", flush=True)
            sess.run(take)
            print("dequeued?!", flush=True)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
    sess.run(put)  # the cancelled dequeues are gone: this one gets the element
    print("usable", sess.run(take), flush=True)
""")


def run_child(mode):
    child = subprocess.Popen([sys.executable, "-c", CHILD, mode], env=python_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        for _ in range(2):
            assert child.stdout.readline().strip() == "ready"
            child.send_signal(signal.SIGINT)  # wherever it lands, the run ends with it
            start = time.monotonic()
            lines.append(child.stdout.readline().strip())
            assert time.monotonic() - start < 5
        lines.append(child.stdout.readline().strip())
        assert child.wait(timeout=30) == 0, child.stderr.read()
        return lines
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_ctrl_c_cancels_a_blocked_local_step():
    assert run_child("local") == ["interrupted", "interrupted", "usable 5"]


def test_ctrl_c_cancels_a_blocked_step_on_a_server():
    assert run_child("server") == ["interrupted", "interrupted", "usable 5"]


def test_other_threads_run_python_while_a_step_blocks():
    q = tf.FIFOQueue(1, [tf.int32])
    take, put = q.dequeue(), q.enqueue(1)
    ticks = []
    with tf.Session() as s:
        t = threading.Thread(target=lambda: s.run(take))
        t.start()
        deadline = time.monotonic() + 0.2
        while time.monotonic() < deadline:  # would stall if the step held the GIL
            ticks.append(1)
        s.run(put)
        t.join(timeout=30)
    assert len(ticks) > 1000


WAITING_CHILD = textwrap.dedent("""
    import socket
    import tensorweave.compat.v1 as tf
    def free_port():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]
    cluster = {"worker": ["127.0.0.1:%d" % free_port()], "ps": ["127.0.0.1:%d" % free_port()]}
    server = tf.train.Server(cluster, job_name="worker", task_index=0)
    with tf.device("/job:ps/task:0"):
        c = tf.constant(1)
    sess = tf.Session(server.target)
    try:  # the ps task never comes: the first step waits for it
        print("ready", flush=True)
        sess.run(c)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
""")


def test_ctrl_c_ends_a_first_step_that_waits_for_the_cluster():
    child = subprocess.Popen([sys.executable, "-c", WAITING_CHILD], env=python_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(0.2)  # not needed for correctness: lets the wait begin, the case to test
        child.send_signal(signal.SIGINT)
        start = time.monotonic()
        assert child.stdout.readline().strip() == "interrupted"
        assert time.monotonic() - start < 5  # the cluster wait lasts 5 minutes
        assert child.wait(timeout=30) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


CUSTOM_HANDLER_CHILD = textwrap.dedent("""
    import signal, threading
    import tensorweave.compat.v1 as tf
    asked = []
    signal.signal(signal.SIGINT, lambda *args: asked.append(True))
    q = tf.FIFOQueue(1, [tf.int32])
    take, put = q.dequeue(), q.enqueue(9)
    sess = tf.Session()
    print("ready", flush=True)
    threading.Timer(1.0, lambda: sess.run(put)).start()
    print("got", sess.run(take), "asked", asked, flush=True)
""")


def test_a_programs_own_sigint_handler_keeps_its_step_running():
    child = subprocess.Popen([sys.executable, "-c", CUSTOM_HANDLER_CHILD], env=python_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        child.send_signal(signal.SIGINT)
        assert child.stdout.readline().strip() == "got 9 asked [True]"
        assert child.wait(timeout=30) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
