"""tf.data in graph mode, as TF 1.x programs use it: sources, map (with captured tensors,
structures and parallel calls) and filter run by the C++ runtime, batch and padded_batch,
shuffle, repeat, iterators (one-shot, initializable with feeds, reinitializable), files,
and OutOfRangeError at the end."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


def _drain(sess, next_element, limit=10000):
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(next_element))
        except tf.errors.OutOfRangeError:
            return out
    raise AssertionError("the dataset did not end")


def test_from_tensor_slices_map_filter_batch_one_shot():
    features = np.arange(20, dtype=np.float32).reshape(10, 2)
    labels = np.arange(10, dtype=np.int64)
    scale = tf.constant(10.0)
    offset = tf.placeholder_with_default(np.float32(0.5), [])  # captured, not a constant
    dataset = (tf.data.Dataset.from_tensor_slices((features, labels))
               .map(lambda x, y: (x * scale + offset, y))
               .filter(lambda x, y: tf.equal(y % 2, 0))
               .batch(2))
    assert dataset.output_types == (tf.float32, tf.int64)
    assert dataset.output_shapes[0].as_list() == [None, 2]
    x, y = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        batches = _drain(sess, (x, y))
    assert [b[1].tolist() for b in batches] == [[0, 2], [4, 6], [8]]
    np.testing.assert_allclose(batches[0][0], [[0.5, 10.5], [40.5, 50.5]])


def test_dict_elements_parallel_map_and_shapes():
    dataset = tf.data.Dataset.range(100).map(
        lambda i: {"i": i, "square": tf.cast(i * i, tf.float32)}, num_parallel_calls=4)
    assert dataset.output_shapes["square"].as_list() == []
    batched = dataset.batch(10, drop_remainder=True)
    assert batched.output_shapes["i"].as_list() == [10]
    element = batched.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        got = _drain(sess, element)
    assert np.concatenate([g["i"] for g in got]).tolist() == list(range(100))
    np.testing.assert_allclose(got[3]["square"], np.arange(30, 40) ** 2)


def test_initializable_iterator_with_fed_data_restarts_per_epoch():
    data = tf.placeholder(tf.int64, [None])
    dataset = tf.data.Dataset.from_tensor_slices(data).shuffle(100, seed=1).batch(4)
    iterator = dataset.make_initializable_iterator()
    element = iterator.get_next()
    with tf.Session() as sess:
        epochs = []
        for n in (10, 6):
            sess.run(iterator.initializer, {data: np.arange(n)})
            epochs.append(np.concatenate(_drain(sess, element)).tolist())
    assert sorted(epochs[0]) == list(range(10)) and epochs[0] != list(range(10))
    assert sorted(epochs[1]) == list(range(6))


def test_reinitializable_iterator_switches_datasets():
    train = tf.data.Dataset.range(5).map(lambda x: x * 2)
    valid = tf.data.Dataset.range(3)
    iterator = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
    element = iterator.get_next()
    with tf.Session() as sess:
        sess.run(iterator.make_initializer(train))
        assert _drain(sess, element) == [0, 2, 4, 6, 8]
        sess.run(iterator.make_initializer(valid))
        assert _drain(sess, element) == [0, 1, 2]
    with pytest.raises(TypeError, match="Expected output types"):
        iterator.make_initializer(tf.data.Dataset.from_tensors(1.0))


def test_feedable_iterator_switches_by_string_handle():
    train = tf.data.Dataset.range(100).repeat()
    valid = tf.data.Dataset.range(1000, 1003)
    handle = tf.placeholder(tf.string, shape=[])
    feedable = tf.data.Iterator.from_string_handle(handle, train.output_types,
                                                   train.output_shapes)
    element = feedable.get_next()
    train_it = train.make_one_shot_iterator()
    valid_it = valid.make_initializable_iterator()
    with tf.Session() as sess:
        train_handle, valid_handle = sess.run([train_it.string_handle(),
                                               valid_it.string_handle()])
        assert [sess.run(element, {handle: train_handle}) for _ in range(3)] == [0, 1, 2]
        sess.run(valid_it.initializer)
        got = []
        for _ in range(3):
            got.append(sess.run(element, {handle: valid_handle}))
        assert got == [1000, 1001, 1002]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(element, {handle: valid_handle})
        assert sess.run(element, {handle: train_handle}) == 3  # the other kept its place
        with pytest.raises(tf.errors.InvalidArgumentError, match="string_handle"):
            sess.run(element, {handle: b"not a handle"})


def test_repeat_take_skip_shard_zip_concatenate_padded_batch():
    ds = tf.data.Dataset.range(10)
    zipped = tf.data.Dataset.zip((ds.shard(2, 1), ds.skip(5)))
    both = ds.take(2).concatenate(ds.skip(8)).repeat(2)
    ragged = tf.data.Dataset.range(1, 4).map(lambda n: tf.fill([n], n))
    padded = ragged.padded_batch(3, padded_shapes=[None], padding_values=tf.constant(-1, tf.int64))
    assert padded.output_shapes.as_list() == [None, None]
    with tf.Session() as sess:
        assert _drain(sess, zipped.make_one_shot_iterator().get_next()) == [
            (1, 5), (3, 6), (5, 7), (7, 8), (9, 9)]
        assert _drain(sess, both.make_one_shot_iterator().get_next()) == [0, 1, 8, 9] * 2
        got = _drain(sess, padded.make_one_shot_iterator().get_next())
    np.testing.assert_array_equal(got[0], [[1, -1, -1], [2, 2, -1], [3, 3, 3]])


def test_tfrecord_dataset_parses_examples_and_text_lines(tmp_path):
    path = str(tmp_path / "data.tfrecord.gz")
    with tf.python_io.TFRecordWriter(path, tf.python_io.TFRecordOptions("GZIP")) as writer:
        for i in range(7):
            writer.write(tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i, -i])),
                "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))}))
                .SerializeToString())
    spec = {"x": tf.FixedLenFeature([2], tf.float32), "y": tf.FixedLenFeature([], tf.int64)}
    dataset = (tf.data.TFRecordDataset([path], compression_type="GZIP")
               .map(lambda r: tf.parse_single_example(r, spec)).batch(3).prefetch(2))
    assert dataset.output_shapes["x"].as_list() == [None, 2]
    lines = tmp_path / "lines.txt"
    lines.write_text("a\nbb\nccc\n")
    text = tf.data.TextLineDataset(str(lines)).map(lambda s: tf.decode_raw(s, tf.uint8)[0])
    with tf.Session() as sess:
        got = _drain(sess, dataset.make_one_shot_iterator().get_next())
        firsts = _drain(sess, text.make_one_shot_iterator().get_next())
    assert [g["y"].tolist() for g in got] == [[0, 1, 2], [3, 4, 5], [6]]
    np.testing.assert_allclose(got[1]["x"], [[3, -3], [4, -4], [5, -5]])
    assert firsts == [ord("a"), ord("b"), ord("c")]


def test_flat_map_and_interleave_of_files(tmp_path):
    files = []
    for f in range(3):
        path = str(tmp_path / ("part-%d" % f))
        with tf.python_io.TFRecordWriter(path) as writer:
            for r in range(4):
                writer.write(b"%d" % (10 * f + r))
        files.append(path)
    names = tf.data.Dataset.from_tensor_slices(files)
    interleaved = names.interleave(tf.data.TFRecordDataset, cycle_length=2, block_length=2)
    flat = tf.data.Dataset.range(1, 4).flat_map(
        lambda n: tf.data.Dataset.range(n).map(lambda i: i * 10 + n))
    parallel = names.apply(tf.data.experimental.parallel_interleave(
        lambda f: tf.data.TFRecordDataset(f).map(tf.string_to_number), cycle_length=3))
    with tf.Session() as sess:
        got = _drain(sess, interleaved.make_one_shot_iterator().get_next())
        nested = _drain(sess, flat.make_one_shot_iterator().get_next())
        numbers = _drain(sess, parallel.make_one_shot_iterator().get_next())
    # Two files at a time, two records from each in turn; the third file takes the place
    # of the first to end.
    assert [int(r) for r in got] == [0, 1, 10, 11, 2, 3, 12, 13, 20, 21, 22, 23]
    assert nested == [1, 2, 12, 3, 13, 23]
    assert sorted(numbers) == sorted(float(10 * f + r) for f in range(3) for r in range(4))


def test_cache_in_a_file_is_written_once_and_replayed(tmp_path):
    cache = str(tmp_path / "cache")
    made = tf.data.Dataset.range(5).map(lambda x: (x, tf.constant("s%d" % 1)))
    dataset = made.cache(cache)
    it = dataset.make_initializable_iterator()
    element = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer)
        first = _drain(sess, element)
        assert (tmp_path / "cache").exists()
        sess.run(it.initializer)
        second = _drain(sess, element)
        # Another pipeline naming the file replays it: its own input (99 elements, "other")
        # is never read.
        third = _drain(sess, tf.data.Dataset.range(99).map(
            lambda x: (x, tf.constant("other"))).cache(cache).make_one_shot_iterator().get_next())
    assert first == second == third == [(i, b"s1") for i in range(5)]


def test_from_generator_runs_the_python_generator_each_pass():
    passes = []

    def gen(limit):
        passes.append(limit)
        for i in range(limit):
            yield i, "w%d" % i, [i] * (i % 3)

    dataset = tf.data.Dataset.from_generator(
        gen, (tf.int64, tf.string, tf.int32),
        (tf.TensorShape([]), tf.TensorShape([]), tf.TensorShape([None])), args=(4,))
    it = dataset.map(lambda i, w, v: (i * 2, w, tf.size(v))).make_initializable_iterator()
    element = it.get_next()
    bad = tf.data.Dataset.from_generator(lambda: iter([[1, 2]]), tf.int64,
                                         tf.TensorShape([3]))
    failing = tf.data.Dataset.from_generator(lambda: (1 / 0 for _ in range(1)), tf.int64)
    with tf.Session() as sess:
        for _ in range(2):
            sess.run(it.initializer)
            got = _drain(sess, element)
        with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
            sess.run(bad.make_one_shot_iterator().get_next())
        with pytest.raises(tf.errors.InvalidArgumentError, match="ZeroDivisionError"):
            sess.run(failing.make_one_shot_iterator().get_next())
    assert passes == [4, 4]
    assert got == [(0, b"w0", 0), (2, b"w1", 1), (4, b"w2", 2), (6, b"w3", 0)]


def test_monitored_training_session_ends_with_the_dataset():
    x = tf.data.Dataset.range(7).batch(2).make_one_shot_iterator().get_next()
    total = tf.Variable(0, dtype=tf.int64)
    add = tf.assign_add(total, tf.reduce_sum(x))
    steps = 0
    with tf.train.MonitoredTrainingSession() as sess:
        while not sess.should_stop():
            sess.run(add)
            steps += 1
    assert steps == 4


def test_errors_are_clear():
    with pytest.raises(ValueError, match="scalar boolean"):
        tf.data.Dataset.range(3).filter(lambda x: x)
    with pytest.raises(TypeError, match="must return a `Dataset`"):
        tf.data.Dataset.range(3).flat_map(lambda x: x)
    it = tf.data.Dataset.range(3).make_initializable_iterator()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
            sess.run(it.get_next())
    with pytest.raises(AttributeError, match="group_by_window is not in tensorweave yet"):
        tf.data.experimental.group_by_window


def test_experimental_ignore_errors_unbatch_and_sample_from_datasets():
    bad = tf.data.Dataset.from_tensor_slices(["1", "x", "3"]).map(tf.string_to_number)
    fine = bad.apply(tf.data.experimental.ignore_errors())
    rows = tf.data.Dataset.from_tensor_slices(
        (np.arange(6).reshape(3, 2), np.array(["a", "b", "c"]))).batch(2)
    unbatched = rows.apply(tf.data.experimental.unbatch())
    assert unbatched.output_shapes[0].as_list() == [2]
    evens = tf.data.Dataset.range(0, 200, 2)
    odds = tf.data.Dataset.range(1, 200, 2)
    mixed = tf.data.experimental.sample_from_datasets([evens, odds], [0.75, 0.25], seed=3)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError):
            _drain(sess, bad.make_one_shot_iterator().get_next())
        assert _drain(sess, fine.make_one_shot_iterator().get_next()) == [1.0, 3.0]
        got = _drain(sess, unbatched.make_one_shot_iterator().get_next())
        assert [(list(x), s) for x, s in got] == [([0, 1], b"a"), ([2, 3], b"b"),
                                                  ([4, 5], b"c")]
        drawn = _drain(sess, mixed.make_one_shot_iterator().get_next())
    assert sorted(drawn) == list(range(200))  # every element of both, once
    first = drawn[:100]
    # 3:1 by weight while both last: far more evens than odds among the first 100.
    assert sum(1 for x in first if x % 2 == 0) > 60
    assert [x for x in drawn if x % 2 == 0] == list(range(0, 200, 2))  # each in order
    with pytest.raises(ValueError, match="2 weights for 1 datasets"):
        tf.data.experimental.sample_from_datasets([evens], [0.5, 0.5])


def test_sizes_and_counts_may_be_tensors():
    # As in TF's guide: a batch size fed to an initializable iterator's initializer.
    batch_size = tf.placeholder(tf.int64, shape=[])
    count = tf.placeholder(tf.int64, shape=[])
    dataset = (tf.data.Dataset.range(10).shuffle(tf.constant(4, tf.int64), seed=1)
               .take(count).batch(batch_size).prefetch(tf.constant(1, tf.int64)))
    assert dataset.output_shapes.as_list() == [None]
    iterator = dataset.make_initializable_iterator()
    element = iterator.get_next()
    with tf.Session() as sess:
        sess.run(iterator.initializer, {batch_size: 3, count: 7})
        sizes = [len(b) for b in _drain(sess, element)]
        assert sizes == [3, 3, 1]
        sess.run(iterator.initializer, {batch_size: 5, count: 10})
        got = _drain(sess, element)
        assert [len(b) for b in got] == [5, 5]
        assert sorted(np.concatenate(got).tolist()) == list(range(10))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Batch size must be greater"):
            sess.run(iterator.initializer, {batch_size: 0, count: 10})
    with pytest.raises(ValueError, match="batch_size must be a scalar"):
        tf.data.Dataset.range(3).batch(tf.constant([1, 2], tf.int64))


def test_string_split_tokens_are_sparse_elements_and_batch():
    # More in test_data_sparse.py; here the text pipeline's usual tokenizer.
    lines = tf.data.Dataset.from_tensor_slices(["a b", "c"])
    tokens = lines.map(lambda line: tf.string_split([line])).batch(2)
    assert tokens.output_classes is tf.SparseTensor
    with tf.Session() as sess:
        got = _drain(sess, tokens.make_one_shot_iterator().get_next())
    assert len(got) == 1
    assert got[0].indices.tolist() == [[0, 0, 0], [0, 0, 1], [1, 0, 0]]
    assert got[0].values.tolist() == [b"a", b"b", b"c"]
    assert got[0].dense_shape.tolist() == [2, 1, 2]
    # Densified inside the function, the same tokens as dense elements.
    dense = lines.map(lambda line: tf.sparse_tensor_to_dense(tf.string_split([line]),
                                                             default_value=""))
    with tf.Session() as sess:
        got = _drain(sess, dense.make_one_shot_iterator().get_next())
    assert [g.tolist() for g in got] == [[[b"a", b"b"]], [[b"c"]]]


def test_batching_strings_leaves_their_sources_whole():
    # Batch moves strings no other tensor holds; slices of an input and cached elements
    # are held elsewhere and must stay intact for the next epoch.
    words = ["alpha", "beta", "gamma"]
    sliced = tf.data.Dataset.from_tensor_slices(words).batch(2).repeat(2)
    cached = (tf.data.Dataset.from_tensor_slices(words).map(lambda w: tf.string_join([w, "!"]))
              .cache().batch(3).repeat(2))
    with tf.Session() as sess:
        got = [b.tolist() for b in _drain(sess, sliced.make_one_shot_iterator().get_next())]
        assert got == [[b"alpha", b"beta"], [b"gamma"]] * 2
        got = [b.tolist() for b in _drain(sess, cached.make_one_shot_iterator().get_next())]
        assert got == [[b"alpha!", b"beta!", b"gamma!"]] * 2
