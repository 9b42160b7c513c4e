#!/usr/bin/python3
"""Fashion-MNIST with a canned DNNClassifier under tf.estimator.train_and_evaluate, the
kind of program Kubeflow's TFJob examples run: each process takes the role TF_CONFIG
gives it (chief and workers train through the ps tasks, the evaluator evaluates each new
checkpoint on the test set and ends after the last), or trains and evaluates alone
without TF_CONFIG.

  python3 examples/python/estimator_trainer.py --model_dir /tmp/fm_estimator
  tw launch --cluster chief=1,ps=1,worker=2,evaluator=1 --success evaluator:0 -- \\
      python3 examples/python/estimator_trainer.py --model_dir /tmp/fm_estimator

Only the import line differs from a TensorFlow 1.x program."""

import argparse

import numpy as np

import tensorweave.compat.v1 as tf
from tensorweave.datasets import fashion_mnist


def features(images):
    return {"pixels": images.reshape(len(images), -1).astype(np.float32) / 255.0}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--data_dir", default=fashion_mnist.DEFAULT_DATA_DIR)
    parser.add_argument("--max_steps", type=int, default=6000)
    parser.add_argument("--batch_size", type=int, default=100)
    parser.add_argument("--hidden_units", default="256",
                        help="comma-separated widths of the hidden layers")
    parser.add_argument("--throttle_secs", type=int, default=10)
    args = parser.parse_args()

    (train_images, train_labels), (test_images, test_labels) = fashion_mnist.load_data(
        args.data_dir)
    config = tf.estimator.RunConfig(model_dir=args.model_dir, save_checkpoints_steps=1000,
                                    tf_random_seed=7, log_step_count_steps=1000)
    classifier = tf.estimator.DNNClassifier(
        hidden_units=[int(u) for u in args.hidden_units.split(",")],
        feature_columns=[tf.feature_column.numeric_column("pixels", shape=[784])],
        n_classes=10, config=config)
    train_spec = tf.estimator.TrainSpec(
        tf.estimator.inputs.numpy_input_fn(features(train_images),
                                           train_labels.astype(np.int64),
                                           batch_size=args.batch_size, num_epochs=None,
                                           shuffle=True, queue_capacity=10000),
        max_steps=args.max_steps)
    eval_spec = tf.estimator.EvalSpec(
        tf.estimator.inputs.numpy_input_fn(features(test_images),
                                           test_labels.astype(np.int64), batch_size=1000,
                                           shuffle=False),
        steps=None, start_delay_secs=0, throttle_secs=args.throttle_secs)
    metrics, _ = tf.estimator.train_and_evaluate(classifier, train_spec, eval_spec)
    role = config.task_type or "local"
    if metrics is None:
        print("%s: done" % role, flush=True)
    else:
        print("%s: step %d, test accuracy: %.4f" % (role, metrics["global_step"],
                                                    metrics["accuracy"]), flush=True)


if __name__ == "__main__":
    main()
