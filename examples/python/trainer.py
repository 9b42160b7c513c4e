# The seeds' parameter-server trainer, as the seed writes it, with its model filled in: the
# MLP of examples/mnist_ps (784-256-10, ReLU, softmax cross-entropy) on Fashion-MNIST, or
# with --model=conv TF's classic "deep MNIST" conv net in tf.layers (conv 5x5x32, pool,
# conv 5x5x64, pool, dense 1024, dropout, dense 10; Adam, the learning rate halved every
# two epochs), as mnist_ps --model=conv.
# Changed from the seed: the import line, the data loading, flags for the model and the
# run (--max_steps, --checkpoint_dir, ...), and the cluster read from TF_CONFIG when the
# host flags are not given (as under `tw launch` or a Kubeflow TFJob). The chief
# evaluates the test set when training ends and prints "test accuracy: X". The chief also
# writes summaries for TensorBoard into the checkpoint directory (MonitoredTrainingSession's
# default): the batch's loss and accuracy every 100 global steps and global_step/sec every
# --log_every steps (`tensorboard --logdir /tmp/train_logs`).
#
#   tw launch --cluster ps=1,worker=2 -- python3 examples/python/trainer.py
#
# The chief's process writes the checkpoints: no task needs the directory allowed.
import argparse
import json
import os
import sys
import time

import numpy as np

import tensorweave.compat.v1 as tf
from tensorweave.datasets import fashion_mnist

FLAGS = None


def cluster_from_flags_or_tf_config():
  """(ClusterSpec, job name, task index) from the seed's flags, else from TF_CONFIG."""
  if FLAGS.ps_hosts or FLAGS.worker_hosts:
    cluster = {"ps": FLAGS.ps_hosts.split(","), "worker": FLAGS.worker_hosts.split(",")}
    return tf.train.ClusterSpec(cluster), FLAGS.job_name, FLAGS.task_index
  tf_config = json.loads(os.environ.get("TF_CONFIG", "{}"))
  if "cluster" not in tf_config:
    sys.exit("trainer.py: give --ps_hosts and --worker_hosts, or TF_CONFIG")
  task = tf_config["task"]
  return tf.train.ClusterSpec(tf_config["cluster"]), task["type"], int(task["index"])


def dense(x, units, name, activation=None):
  """A layer of examples/mnist_ps's model: weights from a truncated normal scaled by
  1/sqrt(fan-in), zero biases."""
  fan_in = int(x.shape[1])
  with tf.variable_scope(name):
    weights = tf.get_variable(
        "weights", [fan_in, units],
        initializer=tf.truncated_normal_initializer(stddev=1.0 / np.sqrt(fan_in)))
    biases = tf.get_variable("biases", [units], initializer=tf.zeros_initializer())
    y = tf.nn.bias_add(tf.matmul(x, weights), biases)
    return activation(y) if activation else y


def conv_net(images, training):
  """TF's deep-MNIST model in tf.layers: logits of `images` ([batch, 784])."""
  x = tf.reshape(images, [-1, 28, 28, 1])
  bias = tf.constant_initializer(0.1)  # no ReLU unit starts dead
  x = tf.layers.conv2d(x, 32, 5, padding="same", activation=tf.nn.relu,
                       bias_initializer=bias, name="conv1")
  x = tf.layers.max_pooling2d(x, 2, 2, padding="same")
  x = tf.layers.conv2d(x, 64, 5, padding="same", activation=tf.nn.relu,
                       bias_initializer=bias, name="conv2")
  x = tf.layers.max_pooling2d(x, 2, 2, padding="same")
  x = tf.reshape(x, [-1, 7 * 7 * 64])
  x = tf.layers.dense(x, 1024, activation=tf.nn.relu, bias_initializer=bias, name="dense")
  x = tf.layers.dropout(x, rate=1.0 - FLAGS.keep_prob, training=training)
  return tf.layers.dense(x, 10, name="softmax")


class TestAccuracyHook(tf.train.SessionRunHook):
  """Evaluates the test set in batches when training ends (a whole-set feed would hold the
  conv net's activations of 10,000 images at once)."""

  def __init__(self, correct, images, labels, test_images, test_labels, batch_size=500):
    self._correct, self._images, self._labels = correct, images, labels
    self._test_images = test_images.reshape(-1, 784).astype(np.float32) / 255.0
    self._test_labels = test_labels.astype(np.int32)
    self._batch_size = batch_size
    self.accuracy = None

  def end(self, session):
    hits = 0
    for begin in range(0, len(self._test_labels), self._batch_size):
      end = begin + self._batch_size
      hits += session.run(self._correct, {self._images: self._test_images[begin:end],
                                          self._labels: self._test_labels[begin:end]})
    self.accuracy = hits / len(self._test_labels)


def train_input(pattern, num_workers, task_index):
  """(images, labels) batches of the TFRecord files matching `pattern` (comma-separated
  globs; examples/python/make_tfrecords.py writes them), this worker's shard, forever."""
  files = sorted(f for p in pattern.split(",") for f in tf.gfile.Glob(p))
  if not files:
    raise ValueError("--train_files %s matches no file" % pattern)
  features = {"image_raw": tf.FixedLenFeature([], tf.string),
              "label": tf.FixedLenFeature([], tf.int64)}

  def parse(records):
    parsed = tf.parse_example(records, features)
    pixels = tf.decode_raw(parsed["image_raw"], tf.uint8)
    return tf.cast(pixels, tf.float32) / 255.0, tf.cast(parsed["label"], tf.int32)

  dataset = (tf.data.TFRecordDataset(files).shard(num_workers, task_index).repeat()
             .shuffle(10000, seed=FLAGS.seed + task_index).batch(FLAGS.batch_size)
             .map(parse).prefetch(1))
  return dataset.make_one_shot_iterator().get_next()


def main(_):
  tf.logging.set_verbosity(tf.logging.INFO)  # checkpoints saved and restored, recoveries
  cluster, job_name, task_index = cluster_from_flags_or_tf_config()
  num_workers = cluster.num_tasks("worker")
  conv = FLAGS.model == "conv"

  # Create and start a server for the local task.
  server = tf.train.Server(cluster,
                           job_name=job_name,
                           task_index=task_index)

  if job_name == "ps":
    server.join()
  elif job_name == "worker":
    (train_images, train_labels), (test_images, test_labels) = fashion_mnist.load_data(
        FLAGS.data_dir)
    batches = fashion_mnist.batches(train_images, train_labels, FLAGS.batch_size,
                                    seed=FLAGS.seed + task_index, num_shards=num_workers,
                                    shard=task_index)

    # Assigns ops to the local worker by default.
    with tf.device(tf.train.replica_device_setter(
        worker_device="/job:worker/task:%d" % task_index,
        cluster=cluster)):

      # Build model...
      if FLAGS.train_files:
        # Input from TFRecord files through tf.data on this worker: its shard of the
        # records, shuffled, batched and parsed a batch at a time, one batch ahead. The
        # placeholders still take a feed (the test set's evaluation).
        next_images, next_labels = train_input(FLAGS.train_files, num_workers, task_index)
        images = tf.placeholder_with_default(next_images, [None, 784], name="images")
        labels = tf.placeholder_with_default(next_labels, [None], name="labels")
      else:
        images = tf.placeholder(tf.float32, [None, 784], name="images")
        labels = tf.placeholder(tf.int32, [None], name="labels")
      training = tf.placeholder_with_default(False, [], name="training")
      if conv:
        logits = conv_net(images, training)
      else:
        hidden = dense(images, FLAGS.hidden_units, "hidden", activation=tf.nn.relu)
        logits = dense(hidden, 10, "softmax")
      loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
          labels=labels, logits=logits))
      hits = tf.equal(tf.argmax(logits, 1, output_type=tf.int32), labels)
      accuracy = tf.reduce_mean(tf.cast(hits, tf.float32))
      correct = tf.reduce_sum(tf.cast(hits, tf.int32))
      global_step = tf.contrib.framework.get_or_create_global_step()
      # TensorBoard's curves (a summary is tagged by its name scope, so the tensors above
      # keep their default names: an op named "loss" would make this tag "loss_1").
      tf.summary.scalar("loss", loss)
      tf.summary.scalar("accuracy", accuracy)

      learning_rate = FLAGS.learning_rate or (0.002 if conv else 0.1)
      decay_steps = FLAGS.decay_steps if FLAGS.decay_steps is not None else (1200 if conv else 0)
      if decay_steps:
        learning_rate = tf.train.exponential_decay(learning_rate, global_step, decay_steps, 0.5,
                                                   staircase=True)
      warmup_steps = FLAGS.warmup_steps if FLAGS.warmup_steps is not None else (300 if conv else 0)
      if warmup_steps:
        learning_rate = learning_rate * tf.minimum(
            1.0, tf.to_float(global_step + 1) / warmup_steps)
      if (FLAGS.optimizer or ("adam" if conv else "adagrad")) == "adam":
        optimizer = tf.train.AdamOptimizer(learning_rate)
      else:
        optimizer = tf.train.AdagradOptimizer(learning_rate)
      if FLAGS.sync:
        optimizer = tf.train.SyncReplicasOptimizer(
            optimizer, replicas_to_aggregate=num_workers, total_num_replicas=num_workers)
      train_op = optimizer.minimize(
          loss, global_step=global_step)

    is_chief = task_index == 0
    # The StopAtStepHook handles stopping after running given steps.
    hooks=[tf.train.StopAtStepHook(last_step=FLAGS.max_steps)]
    if FLAGS.sync:
      hooks.append(optimizer.make_session_run_hook(is_chief))
    # The chief evaluates the test set when training ends.
    evaluation = TestAccuracyHook(correct, images, labels, test_images, test_labels)

    # Only the ps tasks and this worker: the other workers may have finished already.
    config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:%d" % task_index])

    # The MonitoredTrainingSession takes care of session initialization,
    # restoring from a checkpoint, saving to a checkpoint, and closing when done
    # or an error occurs.
    with tf.train.MonitoredTrainingSession(master=server.target,
                                           is_chief=is_chief,
                                           checkpoint_dir=FLAGS.checkpoint_dir,
                                           hooks=hooks,
                                           chief_only_hooks=[evaluation],
                                           save_checkpoint_steps=FLAGS.save_every,
                                           log_step_count_steps=FLAGS.log_every,
                                           config=config) as mon_sess:
      local_step = 0
      first = last = None  # (time, global step) of the chief's first and last steps
      while not mon_sess.should_stop():
        # Run a training step asynchronously.
        # See `tf.train.SyncReplicasOptimizer` for additional details on how to
        # perform *synchronous* training.
        # mon_sess.run handles AbortedError in case of preempted PS.
        if FLAGS.train_files:
          feed = {training: True}
        else:
          batch_images, batch_labels = next(batches)
          feed = {images: batch_images, labels: batch_labels, training: True}
        _, step, batch_loss = mon_sess.run([train_op, global_step, loss], feed)
        local_step += 1
        last = (time.time(), step)
        first = first or last
        if is_chief and local_step % FLAGS.log_every == 0:
          print("step %d: loss %.4f" % (step, batch_loss), flush=True)
    if is_chief and last[0] > first[0]:
      # Every global step consumed one batch (num_workers batches when synchronous).
      examples = (last[1] - first[1]) * FLAGS.batch_size * (num_workers if FLAGS.sync else 1)
      print("trained %d global steps in %.1f s: %.0f examples/s (all workers)" % (
          last[1] - first[1], last[0] - first[0], examples / (last[0] - first[0])), flush=True)
    if is_chief:
      print("test accuracy: %.4f" % evaluation.accuracy, flush=True)
      # The ps tasks serve until asked to stop (TF's never stopped); workers that finished
      # first are gone already, which stop_cluster reports as unavailable.
      try:
        server.stop_cluster()
      except tf.errors.UnavailableError as e:
        print("stopping the cluster: %s" % e.message, flush=True)


if __name__ == "__main__":
  parser = argparse.ArgumentParser()
  parser.register("type", "bool", lambda v: v.lower() == "true")
  # Flags for defining the tf.train.ClusterSpec
  parser.add_argument("--ps_hosts", type=str, default="",
                      help="Comma-separated list of hostname:port pairs")
  parser.add_argument("--worker_hosts", type=str, default="",
                      help="Comma-separated list of hostname:port pairs")
  parser.add_argument("--job_name", type=str, default="", help="One of 'ps', 'worker'")
  # Flags for defining the tf.train.Server
  parser.add_argument("--task_index", type=int, default=0,
                      help="Index of task within the job")
  # The model and the run
  parser.add_argument("--data_dir", type=str, default=fashion_mnist.DEFAULT_DATA_DIR)
  parser.add_argument("--train_files", type=str, default="",
                      help="TFRecord files of training examples (comma-separated globs) to "
                           "read through tf.data instead of feeding batches")
  parser.add_argument("--checkpoint_dir", type=str, default="/tmp/train_logs")
  parser.add_argument("--max_steps", type=int, default=12000)
  parser.add_argument("--batch_size", type=int, default=100)
  parser.add_argument("--model", choices=["mlp", "conv"], default="mlp")
  parser.add_argument("--optimizer", choices=["adagrad", "adam"], default=None,
                      help="default: adagrad for mlp, adam for conv")
  parser.add_argument("--learning_rate", type=float, default=None,
                      help="default: 0.1 for mlp, 0.002 for conv")
  parser.add_argument("--decay_steps", type=int, default=None,
                      help="halve the learning rate every so many global steps (0: never; "
                           "default: never for mlp, 1200 for conv)")
  parser.add_argument("--warmup_steps", type=int, default=None,
                      help="raise the learning rate linearly from 0 over so many global steps "
                           "(default: none for mlp, 300 for conv)")
  parser.add_argument("--keep_prob", type=float, default=0.5,
                      help="conv: the probability that dropout keeps a unit while training")
  parser.add_argument("--hidden_units", type=int, default=256)
  parser.add_argument("--save_every", type=int, default=4000)
  parser.add_argument("--log_every", type=int, default=1000)
  parser.add_argument("--seed", type=int, default=1)
  parser.add_argument("--sync", type="bool", nargs="?", const=True, default=False,
                      help="Synchronous training with SyncReplicasOptimizer")
  FLAGS, unparsed = parser.parse_known_args()
  tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
