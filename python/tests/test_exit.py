"""A program exits cleanly while a daemon thread is blocked in a step (a queue runner, the
sync replicas chief's update): the step may end while the interpreter finalizes, and the
thread must not take the process down with it (it once aborted with "terminate called
without an active exception")."""

import subprocess
import sys
import textwrap

from conftest import python_env

# The worker's daemon thread waits on a queue of the ps task; at exit the ps task dies, so
# the step fails (Unavailable) while the interpreter finalizes.
CHILD = textwrap.dedent("""
    import json, socket, subprocess, sys, threading
    import tensorweave.compat.v1 as tf

    def free_port():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    cluster = {"ps": ["127.0.0.1:%d" % free_port()], "worker": ["127.0.0.1:%d" % free_port()]}
    ps = subprocess.Popen([sys.executable, "-c",
                           "import json, sys; import tensorweave.compat.v1 as tf; "
                           "tf.train.Server(json.loads(sys.argv[1]), 'ps', 0).join()",
                           json.dumps(cluster)])
    server = tf.train.Server(cluster, job_name="worker", task_index=0)
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(1, tf.float32, shared_name="q")
    size, dequeue = queue.size(), queue.dequeue()
    sess = tf.Session(server.target)
    sess.run(size)  # the ps task is up
    # Whether the step is waiting yet or starts later, it ends after the ps task is gone.
    threading.Thread(target=lambda: sess.run(dequeue), daemon=True).start()
    import atexit
    atexit.register(ps.kill)  # runs as the interpreter starts to finalize
    print("main done", flush=True)
""")


def test_a_step_ending_while_the_interpreter_finalizes_does_not_abort():
    out = subprocess.run([sys.executable, "-c", CHILD], env=python_env(), capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.strip() == "main done"
    assert "terminate called" not in out.stderr
    assert out.returncode == 0, out.stderr
