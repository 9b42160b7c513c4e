"""`tw serve`: TF Serving's REST predict API over an exported SavedModel, checked against
the predictions of the session that trained the model."""

import json
import os
import signal
import subprocess
import urllib.error
import urllib.request

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


@pytest.fixture
def served(tmp_path, tw_tool):
    """A two-input model exported as version 3 under a base directory, served by `tw serve`
    on a free loopback port; yields (url base, predict(points, scale) from the session)."""
    base = tmp_path / "models"
    points = tf.placeholder(tf.float32, [None, 2], name="points")
    scale = tf.placeholder(tf.float32, [None], name="scale")
    w = tf.get_variable("w", initializer=np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]],
                                                  dtype=np.float32))
    logits = tf.matmul(points, w) * tf.expand_dims(scale, 1)
    probs, best = tf.nn.softmax(logits), tf.argmax(logits, 1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.saved_model.simple_save(sess, str(base / "3"), {"points": points, "scale": scale},
                                   {"probs": probs, "best": best})
        expected = lambda p, s: sess.run([probs, best], {points: p, scale: s})  # noqa: E731
        process = subprocess.Popen(
            [tw_tool, "serve", str(base), "--model_name", "toy", "--bind-host", "127.0.0.1",
             "--port", "0", "--threads", "2"], stdout=subprocess.PIPE, text=True)
        try:
            line = process.stdout.readline()
            assert "version 3" in line, line
            url = line.split(" at ")[1].split(":predict")[0]
            yield url, expected
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0


def post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_rows_and_columns_give_the_sessions_predictions(served):
    url, expected = served
    p = np.array([[0.5, 1.0], [-1.0, 2.0], [3.0, 0.0]], np.float32)
    s = np.array([1.0, 0.5, 2.0], np.float32)
    want_probs, want_best = expected(p, s)
    status, body = post(url + ":predict", {"instances": [
        {"points": p[i].tolist(), "scale": float(s[i])} for i in range(3)]})
    assert status == 200, body
    np.testing.assert_allclose([r["probs"] for r in body["predictions"]], want_probs, rtol=1e-6)
    assert [r["best"] for r in body["predictions"]] == want_best.tolist()
    status, body = post(url + ":predict", {"signature_name": "serving_default",
                                           "inputs": {"points": p.tolist(), "scale": s.tolist()}})
    assert status == 200, body
    np.testing.assert_allclose(body["outputs"]["probs"], want_probs, rtol=1e-6)
    with urllib.request.urlopen(url, timeout=30) as response:
        assert json.loads(response.read())["model_version_status"][0]["state"] == "AVAILABLE"


def test_bad_requests_are_answered_naming_what_is_wrong(served):
    url, _ = served
    cases = [
        ("not json", 400, "not a JSON object"),
        ({"instances": [{"points": [1.0, 2.0]}]}, 400, 'no input "scale"'),
        ({"inputs": {"points": [[1.0], [2.0, 3.0]], "scale": [1.0, 1.0]}}, 400, "ragged"),
        ({"inputs": {"points": [["a", "b"]], "scale": [1.0]}}, 400, "needs numbers"),
        ({"signature_name": "nope", "instances": [1]}, 400, '"nope" not found'),
        ({"instances": [], "inputs": {}}, 400, "exactly one of"),
    ]
    for body, code, message in cases:
        data = body if isinstance(body, str) else json.dumps(body)
        request = urllib.request.Request(url + ":predict", data=data.encode(), method="POST")
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(request, timeout=30)
        assert error.value.code == code
        assert message in json.loads(error.value.read())["error"], body
    other = url.rsplit("/", 1)[0] + "/other:predict"
    assert post(other, {"instances": [1]})[0] == 404


def test_a_directory_without_a_model_is_refused(tmp_path, tw_tool):
    result = subprocess.run([tw_tool, "serve", str(tmp_path), "--port", "0"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert "holds no saved_model.pb" in result.stderr


def test_tw_serve_feeds_assets_to_the_main_op(tmp_path, tw_tool):
    vocabulary = tmp_path / "labels.txt"
    vocabulary.write_text("cat dog")
    path = tf.constant(str(vocabulary), name="labels_path")
    tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, path)
    labels = tf.Variable("", name="labels")
    main_op = tf.group(tf.assign(labels, tf.read_file(path)))
    x = tf.placeholder(tf.float32, [None], name="x")
    out = tf.identity(tf.fill(tf.shape(x), labels.read_value()), name="out")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.saved_model.simple_save(sess, str(tmp_path / "m" / "1"), {"x": x}, {"labels": out},
                                   legacy_init_op=main_op)
    vocabulary.unlink()  # served from the export's assets/
    process = subprocess.Popen([tw_tool, "serve", str(tmp_path / "m"), "--bind-host",
                                "127.0.0.1", "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().split(" at ")[1].strip()
        status, body = post(url, {"instances": [1.0, 2.0]})
        assert status == 200, body
        assert body["predictions"] == ["cat dog", "cat dog"]
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
