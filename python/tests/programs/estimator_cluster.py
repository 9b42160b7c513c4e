"""An Estimator program as Kubeflow's TFJob examples write them: train_and_evaluate with
the role TF_CONFIG gives (chief, worker, ps, evaluator; local without TF_CONFIG), a
linear model on y = 2x + 1. Prints its role's outcome, which the tests read."""

import argparse

import numpy as np

import tensorweave.compat.v1 as tf


def model_fn(features, labels, mode, params):
    prediction = tf.layers.dense(features["x"], 1, name="linear")
    if params.get("strategy"):
        # A variable the strategy's partitioner splits (it adds nothing to the prediction).
        table = tf.get_variable("table", [4, 1], initializer=tf.zeros_initializer())
        prediction += 0.0 * tf.reduce_sum(table)
        if mode == tf.estimator.ModeKeys.TRAIN:
            parts = list(table) if hasattr(table, "_get_variable_list") else [table]
            print("table parts: %s" % " ".join(p.device for p in parts), flush=True)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=prediction)
    loss = tf.losses.mean_squared_error(labels, prediction)
    train_op = tf.train.GradientDescentOptimizer(params["learning_rate"]).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--max_steps", type=int, default=300)
    parser.add_argument("--strategy", action="store_true",
                        help="RunConfig(train_distribute=ParameterServerStrategy(...)) with "
                             "a partitioner")
    args = parser.parse_args()
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, size=(200, 1)).astype(np.float32)
    y = (2.0 * x + 1.0).astype(np.float32)
    strategy = None
    if args.strategy:
        strategy = tf.distribute.experimental.ParameterServerStrategy(
            variable_partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner(2))
    config = tf.estimator.RunConfig(model_dir=args.model_dir, save_checkpoints_steps=50,
                                    log_step_count_steps=100, tf_random_seed=1,
                                    train_distribute=strategy)
    estimator = tf.estimator.Estimator(model_fn, config=config,
                                       params={"learning_rate": 0.2,
                                               "strategy": args.strategy})
    train_spec = tf.estimator.TrainSpec(
        tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=20, num_epochs=None,
                                           shuffle=True), max_steps=args.max_steps)
    eval_spec = tf.estimator.EvalSpec(
        tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=50, shuffle=False),
        steps=None, start_delay_secs=0, throttle_secs=1)
    result, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    role = config.task_type or "local"
    if result is None:
        print("%s finished" % role, flush=True)
    else:
        print("%s evaluated step %d: loss %.6f" % (role, result["global_step"],
                                                   result["loss"]), flush=True)


if __name__ == "__main__":
    main()
