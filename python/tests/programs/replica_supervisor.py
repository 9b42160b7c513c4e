# A distributed trainer in the style of TensorFlow 1.x's published examples of the
# Supervisor era (mnist_replica.py, Kubeflow's dist_mnist.py), changed only in its import
# line and its data loading: tf.app.flags, TF_CONFIG parsed by the program, a model of
# tf.Variables and tf.nn ops under replica_device_setter with an int32 global step,
# SyncReplicasOptimizer with the chief queue runner and init tokens, Supervisor, and
# ConfigProto(device_filters=...). The chief prints "validation cross entropy: X" and
# "global step: N" at the end.
import json
import math
import os
import sys
import tempfile
import time

import numpy as np

import tensorweave.compat.v1 as tf
from tensorweave.datasets import fashion_mnist

flags = tf.app.flags
flags.DEFINE_integer("hidden_units", 100, "Number of units in the hidden layer of the NN")
flags.DEFINE_integer("train_steps", 200, "Number of (global) training steps to perform")
flags.DEFINE_integer("batch_size", 100, "Training batch size")
flags.DEFINE_float("learning_rate", 0.01, "Learning rate")
flags.DEFINE_boolean("sync_replicas", False, "Use the sync_replicas (synchronized replicas) "
                     "mode, wherein the parameter updates from workers are aggregated before "
                     "applied to avoid stale gradients")
flags.DEFINE_integer("replicas_to_aggregate", None, "Number of replicas to aggregate before "
                     "parameter update is applied (For sync_replicas mode only; default: "
                     "num_workers)")
flags.DEFINE_string("train_dir", None, "Directory for checkpoints (default: a new temporary "
                    "directory), written by the chief")
FLAGS = flags.FLAGS

IMAGE_PIXELS = 28


def one_hot(labels):
  out = np.zeros((len(labels), 10), np.float32)
  out[np.arange(len(labels)), labels] = 1.0
  return out


def main(unused_argv):
  tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
  cluster = tf_config["cluster"]
  job_name = tf_config["task"]["type"]
  task_index = tf_config["task"]["index"]
  num_workers = len(cluster["worker"])
  cluster_spec = tf.train.ClusterSpec(cluster)
  server = tf.train.Server(cluster_spec, job_name=job_name, task_index=task_index)
  if job_name == "ps":
    server.join()
    return

  is_chief = (task_index == 0)
  (train_images, train_labels), (test_images, test_labels) = fashion_mnist.load_data()
  batches = fashion_mnist.batches(train_images, train_labels, FLAGS.batch_size,
                                  seed=task_index, num_shards=num_workers, shard=task_index)

  worker_device = "/job:worker/task:%d/cpu:0" % task_index
  with tf.device(
      tf.train.replica_device_setter(
          worker_device=worker_device, ps_device="/job:ps/cpu:0", cluster=cluster_spec)):
    global_step = tf.Variable(0, name="global_step", trainable=False)

    hid_w = tf.Variable(tf.truncated_normal([IMAGE_PIXELS * IMAGE_PIXELS, FLAGS.hidden_units],
                                            stddev=1.0 / IMAGE_PIXELS), name="hid_w")
    hid_b = tf.Variable(tf.zeros([FLAGS.hidden_units]), name="hid_b")
    sm_w = tf.Variable(tf.truncated_normal([FLAGS.hidden_units, 10],
                                           stddev=1.0 / math.sqrt(FLAGS.hidden_units)),
                       name="sm_w")
    sm_b = tf.Variable(tf.zeros([10]), name="sm_b")

    x = tf.placeholder(tf.float32, [None, IMAGE_PIXELS * IMAGE_PIXELS])
    y_ = tf.placeholder(tf.float32, [None, 10])
    hid_lin = tf.nn.xw_plus_b(x, hid_w, hid_b)
    hid = tf.nn.relu(hid_lin)
    y = tf.nn.softmax(tf.nn.xw_plus_b(hid, sm_w, sm_b))
    cross_entropy = -tf.reduce_sum(y_ * tf.log(tf.clip_by_value(y, 1e-10, 1.0)))

    opt = tf.train.AdamOptimizer(FLAGS.learning_rate)
    if FLAGS.sync_replicas:
      replicas_to_aggregate = FLAGS.replicas_to_aggregate or num_workers
      opt = tf.train.SyncReplicasOptimizer(
          opt, replicas_to_aggregate=replicas_to_aggregate, total_num_replicas=num_workers,
          name="mnist_sync_replicas")
    train_step = opt.minimize(cross_entropy, global_step=global_step)

    if FLAGS.sync_replicas:
      local_init_op = opt.local_step_init_op
      if is_chief:
        local_init_op = opt.chief_init_op
      ready_for_local_init_op = opt.ready_for_local_init_op
      chief_queue_runner = opt.get_chief_queue_runner()
      sync_init_op = opt.get_init_tokens_op()

    init_op = tf.global_variables_initializer()
    train_dir = FLAGS.train_dir or tempfile.mkdtemp()
    if FLAGS.sync_replicas:
      sv = tf.train.Supervisor(is_chief=is_chief, logdir=train_dir, init_op=init_op,
                               local_init_op=local_init_op,
                               ready_for_local_init_op=ready_for_local_init_op,
                               recovery_wait_secs=1, global_step=global_step)
    else:
      sv = tf.train.Supervisor(is_chief=is_chief, logdir=train_dir, init_op=init_op,
                               recovery_wait_secs=1, global_step=global_step)

    sess_config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False,
                                 device_filters=["/job:ps", "/job:worker/task:%d" % task_index])
    if is_chief:
      print("Worker %d: Initializing session..." % task_index)
    else:
      print("Worker %d: Waiting for session to be initialized..." % task_index)
    sess = sv.prepare_or_wait_for_session(server.target, config=sess_config)
    print("Worker %d: Session initialization complete." % task_index)

    if FLAGS.sync_replicas and is_chief:
      sess.run(sync_init_op)
      sv.start_queue_runners(sess, [chief_queue_runner])

    time_begin = time.time()
    local_step = 0
    while True:
      batch_xs, batch_labels = next(batches)
      _, step = sess.run([train_step, global_step],
                         feed_dict={x: batch_xs, y_: one_hot(batch_labels)})
      local_step += 1
      if step >= FLAGS.train_steps:
        break
    print("Training elapsed time: %f s" % (time.time() - time_begin))

    if is_chief:
      val_feed = {x: test_images.reshape(-1, 784).astype(np.float32) / 255.0,
                  y_: one_hot(test_labels)}
      val_xent = sess.run(cross_entropy, feed_dict=val_feed)
      print("validation cross entropy: %g" % (val_xent / len(test_labels)))
      print("global step: %d" % sess.run(global_step))
      sys.stdout.flush()
      sv.request_stop()


if __name__ == "__main__":
  tf.app.run()
