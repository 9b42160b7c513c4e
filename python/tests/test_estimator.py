"""tf.estimator.Estimator as TF 1.x programs use it, in one process: a model_fn trained
from numpy_input_fn, checkpoints in model_dir that training resumes from (max_steps
already reached skips), evaluate with tf.metrics and the mean loss (and its summary),
predict per example, the checkpoint's variables read back with tf.train.list_variables
and load_variable, warm starting, and TF's errors for misuse."""

import glob
import os

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


def _line(n=200, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, size=(n, 1)).astype(np.float32)
    return x, (2.0 * x + 1.0).astype(np.float32)


def _regression_fn(features, labels, mode, params):
    prediction = tf.layers.dense(features["x"], 1, name="linear")
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": prediction})
    loss = tf.losses.mean_squared_error(labels, prediction)
    train_op = tf.train.GradientDescentOptimizer(params["learning_rate"]).minimize(
        loss, global_step=tf.train.get_global_step())
    metrics = {"mean_prediction": tf.metrics.mean(prediction)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      eval_metric_ops=metrics)


def _estimator(model_dir, learning_rate=0.5, **kwargs):
    config = tf.estimator.RunConfig(save_checkpoints_steps=50, log_step_count_steps=100,
                                    tf_random_seed=1, keep_checkpoint_max=2)
    return tf.estimator.Estimator(_regression_fn, model_dir=str(model_dir), config=config,
                                  params={"learning_rate": learning_rate}, **kwargs)


def test_train_evaluate_predict_and_resume(tmp_path):
    x, y = _line()
    train_input = tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=20,
                                                     num_epochs=None, shuffle=True)
    estimator = _estimator(tmp_path)
    assert estimator.train(train_input, steps=200) is estimator
    assert os.path.basename(estimator.latest_checkpoint()) == "model.ckpt-200"
    names = estimator.get_variable_names()
    assert "global_step" in names and "linear/kernel" in names and "linear/bias" in names
    np.testing.assert_allclose(estimator.get_variable_value("linear/kernel"), [[2.0]],
                               atol=0.05)
    np.testing.assert_allclose(tf.train.load_variable(str(tmp_path), "linear/bias"), [1.0],
                               atol=0.05)
    assert dict(tf.train.list_variables(str(tmp_path)))["linear/kernel"] == [1, 1]

    eval_input = tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=50,
                                                    shuffle=False)
    results = estimator.evaluate(eval_input)
    assert results["global_step"] == 200
    assert results["loss"] < 1e-3
    np.testing.assert_allclose(results["mean_prediction"], y.mean(), atol=0.01)
    assert glob.glob(os.path.join(str(tmp_path), "eval", "events.out.tfevents.*"))
    assert estimator.evaluate(eval_input, steps=1, name="one")["global_step"] == 200
    assert os.path.isdir(os.path.join(str(tmp_path), "eval_one"))

    predict_input = tf.estimator.inputs.numpy_input_fn({"x": x[:7]}, batch_size=3,
                                                       shuffle=False)
    predictions = list(estimator.predict(predict_input))
    assert len(predictions) == 7
    np.testing.assert_allclose([p["y"][0] for p in predictions], y[:7, 0], atol=0.05)
    batches = list(estimator.predict(predict_input, yield_single_examples=False))
    assert [len(b["y"]) for b in batches] == [3, 3, 1]

    # RunConfig's keep_checkpoint_max (2 here) bounds the checkpoints kept.
    kept = glob.glob(os.path.join(str(tmp_path), "model.ckpt-*.index"))
    assert sorted(os.path.basename(p) for p in kept) == ["model.ckpt-150.index",
                                                          "model.ckpt-200.index"]

    # max_steps already reached: nothing runs; steps counts from the checkpoint.
    estimator.train(train_input, max_steps=150)
    assert os.path.basename(estimator.latest_checkpoint()) == "model.ckpt-200"
    estimator.train(train_input, steps=30)
    assert os.path.basename(estimator.latest_checkpoint()) == "model.ckpt-230"


def test_training_ends_with_the_input(tmp_path):
    x, y = _line(60)
    estimator = _estimator(tmp_path)
    estimator.train(tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=20,
                                                       num_epochs=2, shuffle=False))
    assert os.path.basename(estimator.latest_checkpoint()) == "model.ckpt-6"


def test_warm_start_takes_the_other_checkpoints_values(tmp_path):
    x, y = _line()
    train_input = tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=20,
                                                     num_epochs=None, shuffle=True)
    source = _estimator(tmp_path / "source")
    source.train(train_input, steps=100)
    warm = _estimator(tmp_path / "warm", learning_rate=0.0,
                      warm_start_from=str(tmp_path / "source"))
    warm.train(train_input, steps=1)  # a learning rate of 0 keeps the loaded values
    for name in ("linear/kernel", "linear/bias"):
        np.testing.assert_array_equal(warm.get_variable_value(name),
                                      source.get_variable_value(name))
    assert warm.get_variable_value("global_step") == 1


def test_misuse_is_refused_as_tf_does(tmp_path):
    with pytest.raises(ValueError, match="Missing train_op"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.TRAIN, loss=tf.constant(1.0))
    with pytest.raises(ValueError, match="Missing predictions"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.PREDICT)
    with pytest.raises(TypeError, match="eval_metric_ops"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL, loss=tf.constant(1.0),
                                   eval_metric_ops={"m": tf.constant(1.0)})
    with pytest.raises(ValueError, match="does not include params"):
        tf.estimator.Estimator(lambda features, labels, mode: None, params={"a": 1})
    # The Estimator's config is a copy with its model_dir; the caller's is unchanged.
    config = tf.estimator.RunConfig()
    estimator = tf.estimator.Estimator(_regression_fn, model_dir=str(tmp_path / "own"),
                                       config=config, params={"learning_rate": 0.1})
    assert config.model_dir is None and estimator.config.model_dir == str(tmp_path / "own")
    with pytest.raises(ValueError, match="different values"):
        tf.estimator.Estimator(_regression_fn, model_dir=str(tmp_path / "a"),
                               config=tf.estimator.RunConfig(model_dir=str(tmp_path / "b")))
    estimator = _estimator(tmp_path)
    x, y = _line(10)
    train_input = tf.estimator.inputs.numpy_input_fn({"x": x}, y, shuffle=False)
    with pytest.raises(ValueError, match="Can not provide both steps and max_steps"):
        estimator.train(train_input, steps=1, max_steps=2)
    with pytest.raises(ValueError, match="shuffle must be provided explicitly"):
        tf.estimator.inputs.numpy_input_fn({"x": x}, y)
    with pytest.raises(ValueError, match="Length of tensors in x and y is mismatched"):
        tf.estimator.inputs.numpy_input_fn({"x": x}, y[:5], shuffle=False)
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.list_variables(str(tmp_path))


PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs",
                       "estimator_cluster.py")


def _evaluated(output, role):
    """(step, loss) of the line `<role> evaluated step N: loss L`."""
    for line in output.splitlines():
        if ("%s evaluated step" % role) in line:
            step, loss = line.split("evaluated step ")[1].split(": loss ")
            return int(step), float(loss)
    raise AssertionError("no evaluation by %s in:\n%s" % (role, output))


def test_train_and_evaluate_locally(tmp_path):
    from conftest import run_python
    out = run_python([PROGRAM, "--model_dir=%s" % tmp_path, "--max_steps=120"], timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    step, loss = _evaluated(out.stdout, "local")
    assert step == 120 and loss < 1e-3
    # Evaluated after saves as well (throttle_secs=1 lets more than the last one through).
    assert glob.glob(os.path.join(str(tmp_path), "eval", "events.out.tfevents.*"))


def test_train_and_evaluate_with_every_tfjob_role(tw_tool, tmp_path):
    """chief, 2 workers, a ps and an evaluator under tw launch, as TFJob runs them: the
    chief and workers train through the ps, the evaluator evaluates checkpoints until the
    one at max_steps and ends the job (--success evaluator:0); the ps is stopped."""
    import subprocess
    import sys
    from conftest import python_env
    out = subprocess.run(
        [tw_tool, "launch", "--cluster", "chief=1,ps=1,worker=2,evaluator=1",
         "--success", "evaluator:0", "--", sys.executable, PROGRAM,
         "--model_dir=%s" % tmp_path, "--max_steps=300"],
        env=python_env(), capture_output=True, text=True, timeout=180)
    output = out.stdout + out.stderr
    assert out.returncode == 0, output
    step, loss = _evaluated(output, "evaluator")
    assert step >= 300 and loss < 1e-2, output
    assert "[chief:0] chief finished" in output
    assert "job succeeded: evaluator:0 exited 0" in output
    kernel = tf.train.load_variable(str(tmp_path), "linear/kernel")
    np.testing.assert_allclose(kernel, [[2.0]], atol=0.1)


def test_run_config_from_tf_config_and_replace(monkeypatch):
    import json
    cluster = {"chief": ["c:1"], "ps": ["p:2"], "worker": ["w:3", "w:4"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps(
        {"cluster": cluster, "task": {"type": "worker", "index": 1}}))
    config = tf.estimator.RunConfig(save_checkpoints_steps=10)
    assert (config.task_type, config.task_id, config.is_chief) == ("worker", 1, False)
    assert config.global_id_in_cluster == 2
    assert config.num_ps_replicas == 1 and config.num_worker_replicas == 3
    # Sessions see the ps, the chief and this worker only, as TF's default config.
    assert config.session_config.device_filters == ["/job:ps", "/job:chief",
                                                    "/job:worker/task:1"]
    other = config.replace(save_checkpoints_secs=30, keep_checkpoint_max=2)
    assert (other.save_checkpoints_secs, other.save_checkpoints_steps) == (30, None)
    assert other.keep_checkpoint_max == 2 and other.task_id == 1
    with pytest.raises(ValueError, match="not supported"):
        config.replace(no_such_setting=1)
    monkeypatch.setenv("TF_CONFIG", json.dumps(
        {"cluster": cluster, "task": {"type": "evaluator", "index": 0}}))
    assert tf.estimator.RunConfig().global_id_in_cluster is None


def test_train_and_evaluate_under_tfjobs_own_tf_config(tmp_path):
    """Each role started by hand with TF_CONFIG as the TFJob operator writes it (the
    evaluator inside "cluster", "environment": "cloud"), no tw launch: the evaluator ends
    after the last checkpoint; the ps is stopped by us, as Kubernetes stops it."""
    import json
    import subprocess
    import sys
    from conftest import free_address, python_env
    cluster = {"chief": [free_address()], "ps": [free_address()],
               "worker": [free_address(), free_address()], "evaluator": [free_address()]}
    roles = [("ps", 0), ("chief", 0), ("worker", 0), ("worker", 1), ("evaluator", 0)]
    procs = {}
    try:
        for role, index in roles:
            env = python_env()
            env["TF_CONFIG"] = json.dumps({"cluster": cluster,
                                           "task": {"type": role, "index": index},
                                           "environment": "cloud"})
            procs[(role, index)] = subprocess.Popen(
                [sys.executable, PROGRAM, "--model_dir=%s" % tmp_path, "--max_steps=200"],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        outputs = {}
        for key in [("chief", 0), ("worker", 0), ("worker", 1), ("evaluator", 0)]:
            outputs[key], _ = procs[key].communicate(timeout=120)
            assert procs[key].returncode == 0, outputs[key]
        step, loss = _evaluated(outputs[("evaluator", 0)], "evaluator")
        assert step >= 200 and loss < 1e-2
        assert "chief finished" in outputs[("chief", 0)]
        assert procs[("ps", 0)].poll() is None  # serving until stopped
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.terminate()
                p.wait(timeout=30)


def test_train_distribute_parameter_server_strategy_under_tw_launch(tw_tool, tmp_path):
    """RunConfig(train_distribute=ParameterServerStrategy(variable_partitioner=...)): the
    chief and a worker train through the ps task, and the strategy's partitioner splits
    the model's `table` in two parts, which the checkpoint holds as TF names them."""
    import subprocess
    import sys
    from conftest import python_env
    out = subprocess.run(
        [tw_tool, "launch", "--cluster", "chief=1,ps=1,worker=1", "--", sys.executable,
         PROGRAM, "--model_dir=%s" % tmp_path, "--max_steps=200", "--strategy"],
        env=python_env(), capture_output=True, text=True, timeout=180)
    output = out.stdout + out.stderr
    assert out.returncode == 0, output
    assert "[chief:0] chief finished" in output
    # Two parts, on the ps task; the checkpoint holds the whole variable, as TF's does.
    assert ("[chief:0] table parts: /job:ps/task:0 /job:ps/task:0"
            in output), output
    assert dict(tf.train.list_variables(str(tmp_path)))["table"] == [4, 1]
    kernel = tf.train.load_variable(str(tmp_path), "linear/kernel")
    np.testing.assert_allclose(kernel, [[2.0]], atol=0.2)


def test_run_config_takes_only_parameter_server_strategy():
    class MirroredStrategy:
        pass
    with pytest.raises(NotImplementedError, match="ParameterServerStrategy only"):
        tf.estimator.RunConfig(train_distribute=MirroredStrategy())
