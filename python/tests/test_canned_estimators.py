"""The canned DNN estimators over numeric feature columns, as TF 1.x programs use them:
DNNClassifier (multi-class and binary) and DNNRegressor learn small problems, with TF's
variable names, eval metrics and prediction keys; input_layer flattens and orders the
columns by name; the columns not built yet say which issue brings them."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


def _blobs(n=600, classes=3, seed=0):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, classes, size=n)
    centers = np.array([[2.0 * np.cos(2 * np.pi * c / classes),
                         2.0 * np.sin(2 * np.pi * c / classes)] for c in range(classes)])
    points = centers[labels] + 0.3 * rng.randn(n, 2)
    return points.astype(np.float32), labels.astype(np.int64)


def _config():
    return tf.estimator.RunConfig(tf_random_seed=3, save_checkpoints_steps=100,
                                  log_step_count_steps=1000)


def test_dnn_classifier_learns_three_classes(tmp_path):
    x, y = _blobs()
    columns = [tf.feature_column.numeric_column("point", shape=[2])]
    classifier = tf.estimator.DNNClassifier(hidden_units=[16, 8], feature_columns=columns,
                                            n_classes=3, model_dir=str(tmp_path),
                                            config=_config())
    classifier.train(tf.estimator.inputs.numpy_input_fn(
        {"point": x}, y, batch_size=32, num_epochs=None, shuffle=True), steps=300)
    names = classifier.get_variable_names()
    for name in ("dnn/hiddenlayer_0/kernel", "dnn/hiddenlayer_1/bias", "dnn/logits/kernel"):
        assert name in names
    assert classifier.get_variable_value("dnn/hiddenlayer_0/kernel").shape == (2, 16)
    metrics = classifier.evaluate(tf.estimator.inputs.numpy_input_fn(
        {"point": x}, y, batch_size=100, shuffle=False))
    assert metrics["accuracy"] > 0.95
    assert set(metrics) >= {"accuracy", "average_loss", "loss", "global_step"}
    predictions = list(classifier.predict(tf.estimator.inputs.numpy_input_fn(
        {"point": x[:5]}, batch_size=5, shuffle=False)))
    assert set(predictions[0]) == {"logits", "probabilities", "class_ids", "classes"}
    assert [int(p["class_ids"][0]) for p in predictions] == y[:5].tolist()
    assert [p["classes"][0] for p in predictions] == [str(c).encode() for c in y[:5]]
    np.testing.assert_allclose([p["probabilities"].sum() for p in predictions], 1.0,
                               rtol=1e-5)


def test_binary_dnn_classifier_has_tfs_binary_metrics(tmp_path):
    x, y = _blobs(classes=2, seed=1)
    classifier = tf.estimator.DNNClassifier(
        hidden_units=[8], feature_columns=[tf.feature_column.numeric_column("point", [2])],
        model_dir=str(tmp_path), config=_config(), optimizer="Adam")
    classifier.train(tf.estimator.inputs.numpy_input_fn(
        {"point": x}, y, batch_size=32, num_epochs=None, shuffle=True), steps=200)
    metrics = classifier.evaluate(tf.estimator.inputs.numpy_input_fn(
        {"point": x}, y, batch_size=100, shuffle=False))
    for key in ("accuracy", "auc", "precision", "recall", "prediction/mean", "label/mean"):
        assert key in metrics
    assert metrics["accuracy"] > 0.95 and metrics["auc"] > 0.95
    np.testing.assert_allclose(metrics["label/mean"], y.mean(), rtol=1e-5)


def test_dnn_regressor_and_input_layer(tmp_path):
    rng = np.random.RandomState(2)
    a = rng.uniform(-1, 1, size=(400, 1)).astype(np.float32)
    b = rng.uniform(-1, 1, size=(400, 1)).astype(np.float32)
    target = (3 * a - b).astype(np.float32)
    columns = [tf.feature_column.numeric_column("b"), tf.feature_column.numeric_column("a")]
    regressor = tf.estimator.DNNRegressor(hidden_units=[16], feature_columns=columns,
                                          model_dir=str(tmp_path), config=_config())
    regressor.train(tf.estimator.inputs.numpy_input_fn(
        {"a": a, "b": b}, target, batch_size=20, num_epochs=None, shuffle=True), steps=400)
    metrics = regressor.evaluate(tf.estimator.inputs.numpy_input_fn(
        {"a": a, "b": b}, target, batch_size=100, shuffle=False))
    assert metrics["average_loss"] < 0.05
    # TF 1.x's default reduction sums over the batch of 100; SUM_OVER_BATCH_SIZE averages.
    np.testing.assert_allclose(metrics["loss"], 100 * metrics["average_loss"], rtol=1e-4)
    averaged = tf.estimator.DNNRegressor(
        hidden_units=[16], feature_columns=columns, model_dir=str(tmp_path / "mean"),
        config=_config(), loss_reduction=tf.losses.Reduction.SUM_OVER_BATCH_SIZE)
    averaged.train(tf.estimator.inputs.numpy_input_fn(
        {"a": a, "b": b}, target, batch_size=20, num_epochs=None, shuffle=True), steps=20)
    mean_metrics = averaged.evaluate(tf.estimator.inputs.numpy_input_fn(
        {"a": a, "b": b}, target, batch_size=100, shuffle=False))
    np.testing.assert_allclose(mean_metrics["loss"], mean_metrics["average_loss"], rtol=1e-4)
    # Columns in name order (a, then b), each flattened.
    with tf.Graph().as_default():
        layer = tf.feature_column.input_layer(
            {"b": tf.constant([[1.0], [2.0]]), "a": tf.constant([[10, 20], [30, 40]])},
            [tf.feature_column.numeric_column("b"),
             tf.feature_column.numeric_column("a", shape=[2], dtype=tf.int32,
                                              normalizer_fn=lambda t: t / 10.0)])
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(layer), [[1, 2, 1], [3, 4, 2]])


def test_unbuilt_columns_and_options_name_the_issue():
    with pytest.raises(AttributeError, match="no open issue brings it"):
        tf.contrib.learn.Experiment  # noqa: B018
    with pytest.raises(TypeError, match="input_layer_partitioner must be a partitioner"):
        tf.estimator.DNNClassifier([4], [tf.feature_column.numeric_column("x")],
                                   input_layer_partitioner=3)
    with pytest.raises(ValueError, match="Unsupported optimizer name"):
        tf.estimator.DNNRegressor([4], [tf.feature_column.numeric_column("x")],
                                  optimizer="Nope")
    with pytest.raises(ValueError, match="shape dimensions must be greater than 0"):
        tf.feature_column.numeric_column("x", shape=[0])


def test_categorical_columns_as_indicators_and_embeddings():
    tf_features = {
        "size": tf.constant([[1.0], [7.5], [3.0]]),
        "color": tf.constant([["red"], ["blue"], ["mauve"]]),
        "shape": tf.constant([[0, 2], [1, -1], [2, 2]], dtype=tf.int64),
    }
    size = tf.feature_column.numeric_column("size")
    color = tf.feature_column.categorical_column_with_vocabulary_list(
        "color", ["red", "green", "blue"])
    shape = tf.feature_column.categorical_column_with_identity("shape", num_buckets=3)
    columns = [tf.feature_column.bucketized_column(size, [2.0, 5.0]),
               tf.feature_column.indicator_column(color),
               tf.feature_column.indicator_column(shape),
               tf.feature_column.embedding_column(
                   shape, 2, combiner="mean", initializer=tf.constant_initializer(
                       [[1.0, 0.0], [0.0, 1.0], [3.0, 3.0]]))]
    layer = tf.feature_column.input_layer(tf_features, columns)
    names = [v.op.name for v in tf.global_variables()]
    assert "input_layer/shape_embedding/embedding_weights" in names
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(layer)
    # By column name: color_indicator (3), shape_embedding (2), shape_indicator (3),
    # size_bucketized (3). "mauve" is not in the vocabulary: no count; -1 drops an id.
    np.testing.assert_allclose(got, [
        [1, 0, 0, 2.0, 1.5, 1, 0, 1, 1, 0, 0],
        [0, 0, 1, 0.0, 1.0, 0, 1, 0, 0, 0, 1],
        [0, 0, 0, 3.0, 3.0, 0, 0, 2, 0, 1, 0]])
    with pytest.raises(ValueError, match="wrap a categorical column"):
        tf.feature_column.input_layer(tf_features, [color])


def test_dnn_classifier_with_an_embedded_categorical_feature(tmp_path):
    rng = np.random.RandomState(4)
    words = np.array(["cat", "dog", "fish", "bird"])
    picked = rng.randint(0, 4, size=400)
    labels = (picked >= 2).astype(np.int64)  # fish and birds are class 1
    columns = [tf.feature_column.embedding_column(
        tf.feature_column.categorical_column_with_vocabulary_list("animal", list(words)), 3)]
    classifier = tf.estimator.DNNClassifier([8], columns, model_dir=str(tmp_path),
                                            config=_config())
    input_fn = tf.estimator.inputs.numpy_input_fn({"animal": words[picked]}, labels,
                                                  batch_size=40, num_epochs=None,
                                                  shuffle=True)
    classifier.train(input_fn, steps=150)
    assert ("dnn/input_from_feature_columns/input_layer/animal_embedding/embedding_weights"
            in classifier.get_variable_names())
    metrics = classifier.evaluate(tf.estimator.inputs.numpy_input_fn(
        {"animal": words[picked]}, labels, batch_size=100, shuffle=False))
    assert metrics["accuracy"] == 1.0


def test_sparse_inputs_from_var_len_features():
    # Example 0: "red", "blue", "red"; example 1: nothing; example 2: "green", "mauve".
    tags = tf.SparseTensor(indices=[[0, 0], [0, 1], [0, 2], [2, 0], [2, 1]],
                           values=["red", "blue", "red", "green", "mauve"],
                           dense_shape=[3, 3])
    color = tf.feature_column.categorical_column_with_vocabulary_list(
        "tags", ["red", "green", "blue"])
    layer = tf.feature_column.input_layer({"tags": tags}, [
        tf.feature_column.indicator_column(color),
        tf.feature_column.embedding_column(color, 2, combiner="sum",
                                           initializer=tf.constant_initializer(
                                               [[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]]))])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(layer)
    # tags_embedding (sum: red + blue + red; none; green), then tags_indicator (counts).
    np.testing.assert_allclose(got, [[7, 5, 2, 0, 1], [0, 0, 0, 0, 0], [0, 1, 0, 1, 0]])
    with pytest.raises(ValueError, match="SparseTensor is not supported"):
        tf.feature_column.input_layer({"tags": tags},
                                      [tf.feature_column.numeric_column("tags")])


def test_dnn_classifier_reads_var_len_features_through_tf_data(tmp_path):
    rng = np.random.RandomState(5)
    records, labels = [], []
    for _ in range(300):
        words = list(rng.choice(["good", "great", "bad", "awful", "the"],
                                size=rng.randint(1, 5)))
        score = sum(w in ("good", "great") for w in words) - sum(
            w in ("bad", "awful") for w in words)
        if score == 0:
            continue
        labels.append(int(score > 0))
        records.append(tf.train.Example(features=tf.train.Features(feature={
            "words": tf.train.Feature(bytes_list=tf.train.BytesList(
                value=[w.encode() for w in words])),
            "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[labels[-1]])),
        })).SerializeToString())
    spec = {"words": tf.VarLenFeature(tf.string), "label": tf.FixedLenFeature([], tf.int64)}

    def input_fn(repeat):
        def parse(record):
            parsed = tf.parse_single_example(record, spec)
            return {"words": parsed["words"]}, parsed["label"]
        dataset = tf.data.Dataset.from_tensor_slices(np.array(records, dtype=object)).map(parse)
        return (dataset.shuffle(100).repeat() if repeat else dataset).batch(20)

    words = tf.feature_column.categorical_column_with_vocabulary_list(
        "words", ["good", "great", "bad", "awful", "the"])
    classifier = tf.estimator.DNNClassifier(
        [8], [tf.feature_column.embedding_column(words, 4, combiner="sum")],
        model_dir=str(tmp_path), config=_config())
    classifier.train(lambda: input_fn(True), steps=200)
    metrics = classifier.evaluate(lambda: input_fn(False))
    assert metrics["accuracy"] > 0.95, metrics


def test_hash_buckets_are_tensorflows():
    """TF's own expectations: string_to_hash_bucket_fast(['a','b','c','d'], 10) is
    [9, 2, 2, 5] (FarmHash fingerprints), and a hashed column counts those buckets."""
    words = tf.constant([["a", "b"], ["c", ""], ["d", "d"]])
    column = tf.feature_column.categorical_column_with_hash_bucket("w", 10)
    layer = tf.feature_column.input_layer({"w": words},
                                          [tf.feature_column.indicator_column(column)])
    with tf.Session() as sess:
        np.testing.assert_array_equal(
            sess.run(tf.string_to_hash_bucket_fast(["a", "b", "c", "d"], 10)), [9, 2, 2, 5])
        np.testing.assert_array_equal(
            sess.run(tf.strings.to_hash_bucket_fast(["a"], 1)), [0])
        got = sess.run(layer)
    expected = np.zeros([3, 10])
    expected[0, 9] = expected[0, 2] = 1  # "a", "b"
    expected[1, 2] = 1  # "c"; "" is dropped, as TF drops empty strings
    expected[2, 5] = 2  # "d" twice
    np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError, match="hash_bucket_size must be set"):
        tf.feature_column.categorical_column_with_hash_bucket("w", 0)



def test_integer_values_hash_by_their_text():
    """TF hashes an integer feature's decimal text (as_string); -1 is no value."""
    numbers = tf.constant([[7, -1], [123456789012, 7]], dtype=tf.int64)
    column = tf.feature_column.categorical_column_with_hash_bucket("n", 1000, dtype=tf.int64)
    oov = tf.feature_column.categorical_column_with_vocabulary_list(
        "n", [7, 8], num_oov_buckets=5)
    layers = [tf.feature_column.input_layer({"n": numbers},
                                            [tf.feature_column.indicator_column(c)])
              for c in (column, oov)]
    with tf.Session() as sess:
        hashed, vocab = sess.run(layers)
        seven, big = sess.run(tf.string_to_hash_bucket_fast(["7", "123456789012"], 1000))
        big_oov = sess.run(tf.string_to_hash_bucket_fast(["123456789012"], 5))[0]
        assert sess.run(tf.as_string(tf.constant([3, -42]))).tolist() == [b"3", b"-42"]
        assert sess.run(tf.as_string(tf.constant(1.5), precision=2)) == b"1.50"
        assert sess.run(tf.as_string(tf.constant(7), width=3, fill="0")) == b"007"
        assert sess.run(tf.as_string(tf.constant([True, False]))).tolist() == [b"true",
                                                                                b"false"]
    assert hashed[0].nonzero()[0].tolist() == [seven] and hashed[0].sum() == 1
    assert hashed[1, seven] == 1 and hashed[1, big] == 1
    assert vocab[0].tolist() == [1, 0, 0, 0, 0, 0, 0]
    assert vocab[1, 0] == 1 and vocab[1, 2 + big_oov] == 1


def test_vocabulary_file_and_oov_buckets(tmp_path):
    vocabulary = tmp_path / "colors.txt"
    vocabulary.write_text("red\ngreen\nblue\nunused\n")
    from_file = tf.feature_column.categorical_column_with_vocabulary_file(
        "color", str(vocabulary), vocabulary_size=3, num_oov_buckets=2)
    assert from_file.num_buckets == 5 and from_file.vocabulary_file == str(vocabulary)
    from_list = tf.feature_column.categorical_column_with_vocabulary_list(
        "color", ["red", "green", "blue"], num_oov_buckets=2)
    colors = {"color": tf.constant([["blue"], ["a"], ["d"], ["unused"], [""]])}
    with tf.Session() as sess:
        got = [sess.run(tf.feature_column.input_layer(
            colors, [tf.feature_column.indicator_column(c)])) for c in (from_file, from_list)]
    # In the vocabulary: its index; outside: 3 + fingerprint % 2 ("a" -> 3 + 9 % 2,
    # "d" -> 3 + 4470636696479570465 % 2, "unused" is past vocabulary_size); "" dropped.
    for layer in got:
        assert layer.argmax(1).tolist()[:3] == [2, 4, 4]
        assert layer[3].sum() == 1 and layer[3, 3:].sum() == 1
        assert layer[4].sum() == 0
    np.testing.assert_array_equal(got[0], got[1])
    with pytest.raises(ValueError, match="Can't specify both"):
        tf.feature_column.categorical_column_with_vocabulary_file(
            "color", str(vocabulary), num_oov_buckets=1, default_value=0)
    with pytest.raises(ValueError, match="larger than the 4 lines"):
        tf.feature_column.categorical_column_with_vocabulary_file(
            "color", str(vocabulary), vocabulary_size=9)
    plain = tf.feature_column.categorical_column_with_vocabulary_file("color", str(vocabulary))
    assert plain.vocabulary_size == 4 and plain.default_value == -1


def test_weight_column_weighs_the_loss_and_the_metrics(tmp_path):
    x = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]], np.float32)
    labels = np.array([0, 1, 2, 0, 1, 2])
    weights = np.array([1.0, 0.0, 2.0, 0.0, 1.0, 0.0], np.float32)
    features = {"x": x, "w": weights}
    estimator = tf.estimator.DNNClassifier(
        [4], [tf.feature_column.numeric_column("x")], n_classes=3, weight_column="w",
        model_dir=str(tmp_path), config=tf.estimator.RunConfig(tf_random_seed=3))
    train = tf.estimator.inputs.numpy_input_fn(features, labels, batch_size=6,
                                               num_epochs=None, shuffle=False)
    estimator.train(train, steps=3)
    whole = tf.estimator.inputs.numpy_input_fn(features, labels, batch_size=6, shuffle=False)
    predicted = [p["class_ids"][0] for p in estimator.predict(
        tf.estimator.inputs.numpy_input_fn({"x": x}, batch_size=6, shuffle=False))]
    result = estimator.evaluate(whole)
    correct = (np.array(predicted) == labels).astype(np.float64)
    assert result["accuracy"] == pytest.approx((correct * weights).sum() / weights.sum())
    # The loss (summed over the batch, TF 1.x's default) counts each example by its weight.
    probabilities = np.array([p["probabilities"] for p in estimator.predict(
        tf.estimator.inputs.numpy_input_fn({"x": x}, batch_size=6, shuffle=False))])
    per_example = -np.log(probabilities[np.arange(6), labels])
    assert result["loss"] == pytest.approx((per_example * weights).sum(), rel=1e-4)
    assert result["average_loss"] == pytest.approx(
        (per_example * weights).sum() / weights.sum(), rel=1e-4)
    with pytest.raises(TypeError, match="Weight column must be"):
        tf.estimator.DNNClassifier([4], [tf.feature_column.numeric_column("x")],
                                   weight_column=3)


def test_label_vocabulary_takes_string_labels(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, size=(300, 2)).astype(np.float32)
    names = np.array(["left", "right"], dtype=object)
    labels = names[(x[:, 0] > 0).astype(int)]
    estimator = tf.estimator.DNNClassifier(
        [8], [tf.feature_column.numeric_column("x", shape=[2])], n_classes=2,
        label_vocabulary=["left", "right"], model_dir=str(tmp_path),
        config=tf.estimator.RunConfig(tf_random_seed=1))
    estimator.train(tf.estimator.inputs.numpy_input_fn(
        {"x": x}, labels, batch_size=50, num_epochs=None, shuffle=True), steps=200)
    result = estimator.evaluate(tf.estimator.inputs.numpy_input_fn(
        {"x": x}, labels, batch_size=100, shuffle=False))
    assert result["accuracy"] > 0.9
    classes = [p["classes"][0] for p in estimator.predict(
        tf.estimator.inputs.numpy_input_fn({"x": x[:4]}, shuffle=False))]
    assert classes == [n.encode() for n in labels[:4]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="label_vocabulary"):
        estimator.evaluate(tf.estimator.inputs.numpy_input_fn(
            {"x": x[:3]}, np.array(["left", "up", "right"], dtype=object), shuffle=False))
    with pytest.raises(ValueError, match="n_classes elements"):
        tf.estimator.DNNClassifier(
            [8], [tf.feature_column.numeric_column("x", shape=[2])], n_classes=3,
            label_vocabulary=["a", "b"]).train(tf.estimator.inputs.numpy_input_fn(
                {"x": x}, labels, num_epochs=1, shuffle=False), steps=1)


def test_linear_model_weights_sums_and_names():
    features = {"x": tf.constant([[1.0], [2.0], [3.0]]),
                "color": tf.constant([["red", "blue"], ["blue", ""], ["mauve", "red"]])}
    x = tf.feature_column.numeric_column("x")
    color = tf.feature_column.categorical_column_with_vocabulary_list(
        "color", ["red", "green", "blue"])
    cols_to_vars = {}
    summed = tf.feature_column.linear_model(features, [x, color], units=1,
                                            cols_to_vars=cols_to_vars)
    tf.get_variable_scope().reuse_variables()
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["linear_model/bias_weights", "linear_model/color/weights",
                     "linear_model/x/weights"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(summed), [[0.0], [0.0], [0.0]])  # zeros first
        sess.run([cols_to_vars[x][0].assign([[10.0]]),
                  cols_to_vars[color][0].assign([[1.0], [2.0], [4.0]]),
                  cols_to_vars["bias"][0].assign([0.5])])
        # 10x + the colors' rows (red 1, blue 4; "" and "mauve" count nothing) + 0.5.
        np.testing.assert_allclose(sess.run(summed), [[15.5], [24.5], [31.5]])
    with pytest.raises(ValueError, match="sparse_combiner"):
        tf.feature_column.linear_model(features, [x], sparse_combiner="max")


def test_linear_model_mean_combiner_and_bucketized_columns():
    features = {"x": tf.constant([[0.5], [2.5]]),
                "ids": tf.constant([[0, 1], [1, -1]], dtype=tf.int64)}
    ids = tf.feature_column.categorical_column_with_identity("ids", 2)
    buckets = tf.feature_column.bucketized_column(tf.feature_column.numeric_column("x"), [1.0])
    cols_to_vars = {}
    out = tf.feature_column.linear_model(features, [ids, buckets], sparse_combiner="mean",
                                         cols_to_vars=cols_to_vars)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([cols_to_vars[ids][0].assign([[2.0], [6.0]]),
                  cols_to_vars[buckets][0].assign([[100.0], [200.0]])])
        # mean of ids' rows (2, 6 -> 4; 6 alone), plus the bucket's row.
        np.testing.assert_allclose(sess.run(out), [[104.0], [206.0]])


def _census_like(n=400, seed=0):
    """A separable problem with a numeric and two categorical features."""
    rng = np.random.RandomState(seed)
    age = rng.uniform(0, 1, size=(n, 1)).astype(np.float32)
    job = rng.choice(np.array(["a", "b", "c"], dtype=object), size=(n, 1))
    city = rng.choice(np.array(["x", "y"], dtype=object), size=(n, 1))
    score = 2.0 * age[:, 0] + (job[:, 0] == "a") * 1.5 - (city[:, 0] == "y") * 1.0
    labels = (score > 0.75).astype(np.int64)
    return {"age": age, "job": job, "city": city}, labels


def _census_columns():
    return [tf.feature_column.numeric_column("age"),
            tf.feature_column.categorical_column_with_vocabulary_list("job", ["a", "b", "c"]),
            tf.feature_column.categorical_column_with_hash_bucket("city", 10)]


def test_linear_classifier_learns_with_ftrl(tmp_path):
    features, labels = _census_like()
    estimator = tf.estimator.LinearClassifier(_census_columns(), model_dir=str(tmp_path))
    estimator.train(tf.estimator.inputs.numpy_input_fn(
        features, labels, batch_size=40, num_epochs=None, shuffle=True), steps=300)
    result = estimator.evaluate(tf.estimator.inputs.numpy_input_fn(
        features, labels, batch_size=100, shuffle=False))
    assert result["accuracy"] > 0.9, result
    names = dict(tf.train.list_variables(str(tmp_path)))
    assert names["linear/linear_model/job/weights"] == [3, 1]
    assert names["linear/linear_model/city/weights"] == [10, 1]
    assert "linear/linear_model/age/weights/Ftrl" in names
    assert "linear/linear_model/age/weights/Ftrl_1" in names
    assert "linear/linear_model/bias_weights" in names
    assert result["global_step"] == 300


def test_linear_regressor_fits_a_line(tmp_path):
    rng = np.random.RandomState(1)
    x = rng.uniform(-1, 1, size=(200, 1)).astype(np.float32)
    y = 2.0 * x + 1.0
    estimator = tf.estimator.LinearRegressor(
        [tf.feature_column.numeric_column("x")], model_dir=str(tmp_path),
        optimizer=tf.train.FtrlOptimizer(0.5))
    estimator.train(tf.estimator.inputs.numpy_input_fn(
        {"x": x}, y, batch_size=20, num_epochs=None, shuffle=True), steps=400)
    np.testing.assert_allclose(
        estimator.get_variable_value("linear/linear_model/x/weights"), [[2.0]], atol=0.1)
    np.testing.assert_allclose(
        estimator.get_variable_value("linear/linear_model/bias_weights"), [1.0], atol=0.1)


def test_dnn_linear_combined_classifier_trains_both_parts(tmp_path):
    features, labels = _census_like()
    linear = _census_columns()
    deep = [tf.feature_column.numeric_column("age"),
            tf.feature_column.embedding_column(linear[1], 2)]
    estimator = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path), linear_feature_columns=linear, dnn_feature_columns=deep,
        dnn_hidden_units=[8], config=tf.estimator.RunConfig(tf_random_seed=2))
    estimator.train(tf.estimator.inputs.numpy_input_fn(
        features, labels, batch_size=40, num_epochs=None, shuffle=True), steps=300)
    result = estimator.evaluate(tf.estimator.inputs.numpy_input_fn(
        features, labels, batch_size=100, shuffle=False))
    assert result["accuracy"] > 0.9, result
    assert result["global_step"] == 300  # one increment per step, not one per optimizer
    names = dict(tf.train.list_variables(str(tmp_path)))
    assert "dnn/hiddenlayer_0/kernel/Adagrad" in names  # the DNN's optimizer
    assert "linear/linear_model/job/weights/Ftrl" in names  # the linear part's
    assert "dnn/hiddenlayer_0/kernel/Ftrl" not in names
    with pytest.raises(ValueError, match="Either linear_feature_columns"):
        tf.estimator.DNNLinearCombinedClassifier()
    with pytest.raises(ValueError, match="dnn_hidden_units must be defined"):
        tf.estimator.DNNLinearCombinedClassifier(dnn_feature_columns=deep)


def test_crossed_columns_are_tensorflows_crosses():
    """TF's sparse_cross_op_test expects 83 for these three values crossed into 100 buckets
    with the default key, and 31 with the next key."""
    features = {"a": tf.constant([["batch1-FC1-F1"]]), "b": tf.constant(["batch1-FC2-F1"]),
                "c": tf.constant([["batch1-FC3-F1"]])}
    crossed = tf.feature_column.crossed_column(["a", "b", "c"], 100)
    keyed = tf.feature_column.crossed_column(["a", "b", "c"], 100, hash_key=0xDECAFCAFFE + 1)
    assert crossed.name == "a_X_b_X_c" and crossed.num_buckets == 100
    layers = [tf.feature_column.input_layer(features, [tf.feature_column.indicator_column(c)])
              for c in (crossed, keyed)]
    direct = tf.sparse.cross_hashed([tf.constant([["batch1-FC1-F1"]]),
                                     tf.constant([["batch1-FC2-F1"]]),
                                     tf.constant([["batch1-FC3-F1"]])], num_buckets=100)
    with tf.Session() as sess:
        got = sess.run(layers)
        assert sess.run(direct).values.tolist() == [83]
        text = sess.run(tf.sparse.cross([tf.constant([["x", "y"]]), tf.constant([[7]])]))
    assert got[0].argmax() == 83 and got[0].sum() == 1
    assert got[1].argmax() == 31 and got[1].sum() == 1
    assert text.values.tolist() == [b"x_X_7", b"y_X_7"]


def test_crossed_column_of_categorical_columns_in_a_linear_model(tmp_path):
    features, labels = _census_like()
    age = tf.feature_column.numeric_column("age")
    job = tf.feature_column.categorical_column_with_vocabulary_list("job", ["a", "b", "c"])
    age_buckets = tf.feature_column.bucketized_column(age, [0.25, 0.5, 0.75])
    crossed = tf.feature_column.crossed_column([age_buckets, job, "city"], 64)
    # Ids: one cross per example (each key has one value), in [0, 64).
    layer = tf.feature_column.input_layer(
        {k: tf.constant(v) for k, v in features.items()},
        [tf.feature_column.indicator_column(crossed)])
    with tf.Session() as sess:
        counts = sess.run(layer)
    assert counts.shape == (400, 64) and (counts.sum(1) == 1).all()
    # Equal features, equal crosses; the 24 combinations fall in few buckets.
    assert len(np.unique(counts.argmax(1))) <= 24
    tf.reset_default_graph()
    estimator = tf.estimator.LinearClassifier([age, job, crossed], model_dir=str(tmp_path))
    estimator.train(tf.estimator.inputs.numpy_input_fn(
        features, labels, batch_size=40, num_epochs=None, shuffle=True), steps=200)
    result = estimator.evaluate(tf.estimator.inputs.numpy_input_fn(
        features, labels, batch_size=100, shuffle=False))
    assert result["accuracy"] > 0.9, result
    assert dict(tf.train.list_variables(str(tmp_path)))[
        "linear/linear_model/age_bucketized_X_city_X_job/weights"] == [64, 1]
    with pytest.raises(ValueError, match="not supported for crossing"):
        tf.feature_column.crossed_column(
            [tf.feature_column.categorical_column_with_hash_bucket("city", 4), "job"], 8)
    with pytest.raises(ValueError, match="length > 1"):
        tf.feature_column.crossed_column(["job"], 8)


def test_batch_norm_and_a_partitioned_input_layer(tmp_path):
    x, y = _blobs(n=300)
    ids = (np.abs(x[:, 0] * 3).astype(np.int64) % 6).reshape(-1, 1)
    columns = [tf.feature_column.numeric_column("point", shape=[2]),
               tf.feature_column.embedding_column(
                   tf.feature_column.categorical_column_with_identity("id", 6), 4)]
    classifier = tf.estimator.DNNClassifier(
        hidden_units=[16], feature_columns=columns, n_classes=3, model_dir=str(tmp_path),
        config=_config(), batch_norm=True,
        input_layer_partitioner=tf.fixed_size_partitioner(2))
    data = {"point": x, "id": ids}
    classifier.train(tf.estimator.inputs.numpy_input_fn(
        data, y, batch_size=32, num_epochs=None, shuffle=True), steps=200)
    names = classifier.get_variable_names()
    for name in ("dnn/hiddenlayer_0/batchnorm_0/gamma", "dnn/hiddenlayer_0/batchnorm_0/beta",
                 "dnn/hiddenlayer_0/batchnorm_0/moving_mean",
                 "dnn/hiddenlayer_0/batchnorm_0/moving_variance"):
        assert name in names, name
    # The moving averages were updated by the train op (they start at 0 and 1).
    assert np.abs(classifier.get_variable_value(
        "dnn/hiddenlayer_0/batchnorm_0/moving_mean")).max() > 1e-3
    embedding = [n for n in names if n.endswith("embedding_weights")]
    assert len(embedding) == 1 and classifier.get_variable_value(embedding[0]).shape == (6, 4)
    metrics = classifier.evaluate(tf.estimator.inputs.numpy_input_fn(
        data, y, batch_size=100, shuffle=False))
    assert metrics["accuracy"] > 0.9
