# A worker task that pushes a tensor of 5,000,003 int32s (four 4 MiB chunks and a partial
# one) into a variable on /job:ps/task:0, adds it again, and pulls the variable back,
# checking every element. Then it lists its TCP connections to the ps host, as
# "connection to port N" lines, which tell how the chunks travelled (the gRPC port or the
# ps task's chunk socket). The cluster comes from TF_CONFIG; this task is worker 0.
import json
import os
import subprocess
import sys

import numpy as np

import tensorweave.compat.v1 as tf

N = 5_000_003


def main():
    cluster = json.loads(os.environ["TF_CONFIG"])["cluster"]
    server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="worker", task_index=0)
    with tf.device("/job:ps/task:0"):
        variable = tf.Variable(tf.zeros([N], tf.int32), name="pushed")
    value = tf.placeholder(tf.int32, [N])
    assign = tf.assign(variable, value)
    add = tf.assign_add(variable, value)
    data = (np.arange(N, dtype=np.int64) * 7919 % 1_000_000_000).astype(np.int32)
    with tf.Session(server.target) as session:
        session.run(assign, {value: data})
        session.run(add, {value: data})
        pulled = session.run(variable)
    print("bit exact" if np.array_equal(pulled, data * 2) else "MISMATCH", flush=True)
    ps_host = cluster["ps"][0].rsplit(":", 1)[0]
    listed = subprocess.run(["ss", "-tnH", "state", "established", "dst", ps_host],
                            capture_output=True, text=True, check=True).stdout
    for line in listed.splitlines():
        print("connection to port", line.split()[-1].rsplit(":", 1)[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
