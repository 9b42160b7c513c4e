"""Estimator.export_saved_model and the exporters that train_and_evaluate runs: SavedModels
in TensorFlow's format whose signatures, loaded back, give the Estimator's predictions."""

import os

import numpy as np
import pytest

import tensorweave.compat.v1 as tf
from tensorweave.protobuf import example_pb2


def _blobs(n=300, seed=0):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 3, size=n)
    centers = np.array([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
    return (centers[labels] + 0.3 * rng.randn(n, 2)).astype(np.float32), labels.astype(np.int64)


def _trained(model_dir, steps=200):
    x, y = _blobs()
    columns = [tf.feature_column.numeric_column("point", shape=[2])]
    classifier = tf.estimator.DNNClassifier(
        hidden_units=[8], feature_columns=columns, n_classes=3, model_dir=model_dir,
        config=tf.estimator.RunConfig(tf_random_seed=3, save_checkpoints_steps=100,
                                      log_step_count_steps=1000))
    classifier.train(tf.estimator.inputs.numpy_input_fn(
        {"point": x}, y, batch_size=32, num_epochs=None, shuffle=True), steps=steps)
    return classifier, x


def _probabilities(classifier, points):
    return np.stack([p["probabilities"] for p in classifier.predict(
        tf.estimator.inputs.numpy_input_fn({"point": points}, batch_size=len(points),
                                           shuffle=False))])


def _load(export_dir):
    graph = tf.Graph()
    sess = tf.Session(graph=graph)
    meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
    return sess, graph, meta


def test_a_parsing_receiver_exports_tensorflows_classification_signature(tmp_path):
    classifier, x = _trained(str(tmp_path / "model"))
    spec = {"point": tf.FixedLenFeature([2], tf.float32)}
    export_dir = classifier.export_saved_model(
        str(tmp_path / "export"),
        tf.estimator.export.build_parsing_serving_input_receiver_fn(spec))
    assert os.path.basename(export_dir).decode().isdigit()
    examples = []
    for point in x[:6]:
        e = example_pb2.Example()
        e.features.feature["point"].float_list.value.extend(point.tolist())
        examples.append(e.SerializeToString())
    sess, graph, meta = _load(export_dir)
    assert set(meta.signature_def) == {"serving_default", "classification", "predict"}
    default = meta.signature_def["serving_default"]
    assert default.method_name == "tensorflow/serving/classify"
    scores, classes = sess.run(
        [graph.get_tensor_by_name(default.outputs["scores"].name),
         graph.get_tensor_by_name(default.outputs["classes"].name)],
        {graph.get_tensor_by_name(default.inputs["inputs"].name): examples})
    np.testing.assert_allclose(scores, _probabilities(classifier, x[:6]), rtol=1e-5)
    assert classes.tolist() == [[b"0", b"1", b"2"]] * 6


def test_a_raw_receiver_keeps_the_predict_signature_only(tmp_path):
    classifier, x = _trained(str(tmp_path / "model"))
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"point": tf.placeholder(tf.float32, [None, 2])})
    extra = tmp_path / "notes.txt"
    extra.write_text("trained for 200 steps")
    export_dir = classifier.export_saved_model(str(tmp_path / "export"), receiver,
                                               assets_extra={"docs/notes.txt": str(extra)})
    copied = os.path.join(export_dir.decode(), "assets.extra", "docs", "notes.txt")
    assert open(copied).read() == "trained for 200 steps"
    sess, graph, meta = _load(export_dir)
    assert set(meta.signature_def) == {"predict"}  # classifying raw floats is left out
    predict = meta.signature_def["predict"]
    probabilities = sess.run(graph.get_tensor_by_name(predict.outputs["probabilities"].name),
                             {graph.get_tensor_by_name(predict.inputs["point"].name): x[:4]})
    np.testing.assert_allclose(probabilities, _probabilities(classifier, x[:4]), rtol=1e-5)


def test_export_needs_a_checkpoint_and_a_receiver(tmp_path):
    estimator = tf.estimator.DNNClassifier(
        hidden_units=[4], feature_columns=[tf.feature_column.numeric_column("point")],
        model_dir=str(tmp_path / "empty"))
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"point": tf.placeholder(tf.float32, [None, 1])})
    with pytest.raises(ValueError, match="Couldn't find trained model at"):
        estimator.export_saved_model(str(tmp_path / "export"), receiver)
    with pytest.raises(ValueError, match="input_receiver_fn must be defined"):
        estimator.export_saved_model(str(tmp_path / "export"), None)


def test_train_and_evaluate_runs_the_exporters(tmp_path):
    x, y = _blobs()
    model_dir = str(tmp_path / "model")
    classifier = tf.estimator.DNNClassifier(
        hidden_units=[8], feature_columns=[tf.feature_column.numeric_column("point", [2])],
        n_classes=3, model_dir=model_dir,
        config=tf.estimator.RunConfig(tf_random_seed=3, save_checkpoints_steps=50,
                                      log_step_count_steps=1000))
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"point": tf.placeholder(tf.float32, [None, 2])})
    exporters = [tf.estimator.LatestExporter("latest", receiver, exports_to_keep=2),
                 tf.estimator.FinalExporter("final", receiver),
                 tf.estimator.BestExporter("best", receiver)]
    train = tf.estimator.TrainSpec(tf.estimator.inputs.numpy_input_fn(
        {"point": x}, y, batch_size=32, num_epochs=None, shuffle=True), max_steps=200)
    evaluate = tf.estimator.EvalSpec(tf.estimator.inputs.numpy_input_fn(
        {"point": x}, y, batch_size=100, shuffle=False), steps=None, exporters=exporters,
        throttle_secs=0)
    result, exports = tf.estimator.train_and_evaluate(classifier, train, evaluate)
    assert result["global_step"] == 200
    assert len(exports) == 3 and all(e is not None for e in exports[:2])
    export_root = os.path.join(model_dir, "export")
    assert len(os.listdir(os.path.join(export_root, "latest"))) == 2  # 4 evaluations, 2 kept
    assert len(os.listdir(os.path.join(export_root, "final"))) == 1
    assert 1 <= len(os.listdir(os.path.join(export_root, "best"))) <= 4
    with pytest.raises(ValueError, match="unique names"):
        tf.estimator.EvalSpec(evaluate.input_fn, exporters=exporters + [exporters[0]])
