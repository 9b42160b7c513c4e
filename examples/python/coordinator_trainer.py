# The parameter-server trainer in TF 2's coordinator style: one program (the chief) drives
# the whole cluster. The model is examples/python/trainer.py's MLP (784-256-10, ReLU,
# Adagrad) on Fashion-MNIST; its variables live on the ps tasks
# (tf.distribute.experimental.ParameterServerStrategy), and a ClusterCoordinator schedules
# the training step on whichever worker is free. A worker that fails leaves its steps to
# the others and takes steps again when it comes back.
#
# Input: with --train_files each worker reads its shard of TFRecord files through tf.data
# (create_per_worker_dataset; examples/python/make_tfrecords.py writes them); otherwise the
# chief feeds each step a batch of the Debian dataset. The chief evaluates the test set at
# the end and prints "test accuracy: X".
#
#   tw launch --cluster chief=1,ps=1,worker=2 -- python3 examples/python/coordinator_trainer.py
#
# ps and worker tasks only serve (tf.distribute.Server); the job ends with the chief.
import argparse
import os
import time

import numpy as np

import tensorweave.compat.v1 as tf
from tensorweave.datasets import fashion_mnist

FLAGS = None


def dense(x, weights, biases, activation=None):
  y = tf.nn.bias_add(tf.matmul(x, weights), biases)
  return activation(y) if activation else y


def make_model():
  """The MLP's variables (made in the strategy's scope: on the ps tasks)."""
  def layer(name, fan_in, units):
    with tf.variable_scope(name):
      weights = tf.get_variable(
          "weights", [fan_in, units],
          initializer=tf.truncated_normal_initializer(stddev=1.0 / np.sqrt(fan_in)))
      biases = tf.get_variable("biases", [units], initializer=tf.zeros_initializer())
      return weights, biases
  hidden = layer("hidden", 784, FLAGS.hidden_units)
  softmax = layer("softmax", FLAGS.hidden_units, 10)
  return lambda images: dense(dense(images, *hidden, activation=tf.nn.relu), *softmax)


def records_dataset(context):
  """This worker's shard of the TFRecord files: parsed, shuffled batches, forever."""
  files = sorted(f for p in FLAGS.train_files.split(",") for f in tf.gfile.Glob(p))
  if not files:
    raise ValueError("--train_files %s matches no file" % FLAGS.train_files)
  features = {"image_raw": tf.FixedLenFeature([], tf.string),
              "label": tf.FixedLenFeature([], tf.int64)}

  def parse(records):
    parsed = tf.parse_example(records, features)
    pixels = tf.decode_raw(parsed["image_raw"], tf.uint8)
    return tf.cast(pixels, tf.float32) / 255.0, tf.cast(parsed["label"], tf.int32)

  worker = context.input_pipeline_id
  return (tf.data.TFRecordDataset(files).shard(context.num_input_pipelines, worker).repeat()
          .shuffle(10000, seed=FLAGS.seed + worker).batch(FLAGS.batch_size).map(parse)
          .prefetch(1))


def main():
  resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
  if resolver.task_type in ("ps", "worker"):
    if FLAGS.train_files and resolver.task_type == "worker":
      # The graph that reads the files comes from the chief, and a server reads only in
      # the directories whoever starts it allows (docs/security.md): this program starts
      # the worker, so it allows the directories of --train_files.
      allowed = [os.path.dirname(os.path.abspath(p)) for p in FLAGS.train_files.split(",")]
      before = os.environ.get("TW_ALLOWED_DIRECTORIES")
      os.environ["TW_ALLOWED_DIRECTORIES"] = ":".join(([before] if before else []) + allowed)
    server = tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type,
                                  task_index=resolver.task_id)
    server.join()
    return

  strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
  with strategy.scope():
    model = make_model()
    global_step = tf.train.get_or_create_global_step()
  optimizer = tf.train.AdagradOptimizer(FLAGS.learning_rate)
  coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)

  def step_fn(images, labels):
    logits = model(images)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    optimizer.minimize(loss, global_step=global_step)  # run with the step, as tf.function
    return loss

  if FLAGS.train_files:
    per_worker = iter(coordinator.create_per_worker_dataset(
        lambda: strategy.distribute_datasets_from_function(records_dataset)))

    @tf.function
    def train_step(iterator):
      images, labels = next(iterator)
      return strategy.run(step_fn, args=(images, labels))

    def schedule():
      return coordinator.schedule(train_step, args=(per_worker,))
  else:
    (train_images, train_labels), _ = fashion_mnist.load_data(FLAGS.data_dir)
    batches = fashion_mnist.batches(train_images, train_labels, FLAGS.batch_size,
                                    seed=FLAGS.seed)
    train_step = tf.function(step_fn)

    def schedule():
      return coordinator.schedule(train_step, args=next(batches))

  # The first step traces the function for every worker, makes the model and the workers'
  # sessions: the rate counts the steps after it, as trainer.py's does.
  schedule().fetch()
  start = time.time()
  for step in range(2, FLAGS.max_steps + 1):
    loss = schedule()
    if step % FLAGS.log_every == 0:
      print("step %d: loss %.4f" % (step, loss.fetch()), flush=True)
  coordinator.join()
  elapsed = time.time() - start
  print("trained %d steps in %.1f s: %.0f examples/s (all workers)" % (
      FLAGS.max_steps - 1, elapsed, (FLAGS.max_steps - 1) * FLAGS.batch_size / elapsed),
      flush=True)

  # The test set, in batches, on the workers.
  _, (test_images, test_labels) = fashion_mnist.load_data(FLAGS.data_dir)
  test_images = test_images.reshape(-1, 784).astype(np.float32) / 255.0

  @tf.function
  def count_correct(images, labels):
    hits = tf.equal(tf.argmax(model(images), 1, output_type=tf.int32), labels)
    return tf.reduce_sum(tf.cast(hits, tf.int32))

  counts = [coordinator.schedule(count_correct, args=(test_images[i:i + 1000],
                                                      test_labels[i:i + 1000].astype(np.int32)))
            for i in range(0, len(test_labels), 1000)]
  accuracy = sum(c.fetch() for c in counts) / len(test_labels)
  print("global step: %d" % coordinator.schedule(
      tf.function(lambda: global_step.read_value())).fetch(), flush=True)
  print("test accuracy: %.4f" % accuracy, flush=True)


if __name__ == "__main__":
  parser = argparse.ArgumentParser()
  parser.add_argument("--data_dir", type=str, default=fashion_mnist.DEFAULT_DATA_DIR)
  parser.add_argument("--train_files", type=str, default="",
                      help="TFRecord files of training examples (comma-separated globs) that "
                           "each worker reads its shard of, instead of batches the chief feeds")
  parser.add_argument("--max_steps", type=int, default=12000)
  parser.add_argument("--batch_size", type=int, default=100)
  parser.add_argument("--hidden_units", type=int, default=256)
  parser.add_argument("--learning_rate", type=float, default=0.1)
  parser.add_argument("--log_every", type=int, default=2000)
  parser.add_argument("--seed", type=int, default=0)
  FLAGS = parser.parse_args()
  main()
