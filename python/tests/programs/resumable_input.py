# A trainer whose input resumes from its checkpoints, in the style of TF 1.x programs that
# use tf.data.experimental.make_saveable_from_iterator: TFRecord files of tf.train.Examples
# read, shuffled without a seed, parsed and batched by tf.data, the iterator put in the
# SAVEABLE_OBJECTS collection, and MonitoredTrainingSession checkpointing every few steps
# and restoring at start. Each step's ids are appended to a log as "<step> <id> <id>...",
# written by a chief-only hook, which runs before the checkpoint saver's. At start it
# prints "start <global step>"; it stops at the end of the data. With --cluster it is the
# chief worker of a cluster whose ps task (started apart) holds the global step; the
# pipeline and its iterator live on the worker.
#
#   resumable_input.py [--cluster=PS_ADDRESS,WORKER_ADDRESS] CHECKPOINT_DIR LOG_FILE RECORD...
#   resumable_input.py --ps=PS_ADDRESS,WORKER_ADDRESS     (serves as the ps task)
import contextlib
import sys
import time

import tensorweave.compat.v1 as tf

args = sys.argv[1:]
if args[0].startswith("--ps="):
    ps, worker = args[0][len("--ps="):].split(",")
    tf.train.Server(tf.train.ClusterSpec({"ps": [ps], "worker": [worker]}), "ps", 0).join()
master, placement = "", contextlib.nullcontext()
if args[0].startswith("--cluster="):
    ps, worker = args.pop(0)[len("--cluster="):].split(",")
    cluster = tf.train.ClusterSpec({"ps": [ps], "worker": [worker]})
    master = tf.train.Server(cluster, "worker", 0).target
    placement = tf.device(tf.train.replica_device_setter(
        cluster=cluster, worker_device="/job:worker/task:0"))
checkpoint_dir, log_path, files = args[0], args[1], args[2:]

placement.__enter__()
dataset = (tf.data.TFRecordDataset(files)
           .shuffle(64)
           .map(lambda record: tf.parse_single_example(
               record, {"id": tf.FixedLenFeature([], tf.int64)})["id"], num_parallel_calls=2)
           .batch(4)
           .prefetch(2))
iterator = dataset.make_one_shot_iterator()
tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS,
                     tf.data.experimental.make_saveable_from_iterator(iterator))
ids = iterator.get_next()
global_step = tf.train.get_or_create_global_step()
step = tf.assign_add(global_step, 1)
placement.__exit__(None, None, None)


class LogHook(tf.train.SessionRunHook):
    def __init__(self, log):
        self._log = log

    def after_create_session(self, session, coord):
        print("start", session.run(global_step), flush=True)

    def before_run(self, run_context):
        return tf.train.SessionRunArgs([step, ids])

    def after_run(self, run_context, run_values):
        done, batch = run_values.results
        self._log.write("%d %s\n" % (done, " ".join(str(i) for i in batch)))
        self._log.flush()
        print("step", done, flush=True)
        time.sleep(0.03)  # a training step's time, so that the kill lands mid-epoch


with open(log_path, "a") as log:
    with tf.train.MonitoredTrainingSession(master=master, checkpoint_dir=checkpoint_dir,
                                           save_checkpoint_steps=5,
                                           chief_only_hooks=[LogHook(log)],
                                           log_step_count_steps=0) as sess:
        while not sess.should_stop():
            sess.run(step.op)
