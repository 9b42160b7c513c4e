"""TF 1.x's queue-based input end to end: producers with epochs, readers of TFRecord, text
and binary files, batch / shuffle_batch / batch_join with their queue runners, ended by
OutOfRangeError, under a Coordinator and under MonitoredTrainingSession."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


def _write_examples(path, labels):
    with tf.python_io.TFRecordWriter(str(path)) as writer:
        for label in labels:
            writer.write(tf.train.Example(features=tf.train.Features(feature={
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
                "image": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[bytes([label % 256] * 4)])),
            })).SerializeToString())


def _drain(sess, fetch, limit=1000):
    """Runs `fetch` until OutOfRangeError; the values."""
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(fetch))
        except tf.errors.OutOfRangeError:
            return out
    raise AssertionError("the input did not end")


def _read_labels(files, num_epochs, shuffle):
    queue = tf.train.string_input_producer(files, num_epochs=num_epochs, shuffle=shuffle)
    _, record = tf.TFRecordReader().read(queue)
    features = tf.parse_single_example(record, {
        "label": tf.FixedLenFeature([], tf.int64),
        "image": tf.FixedLenFeature([], tf.string)})
    image = tf.decode_raw(features["image"], tf.uint8)
    image.set_shape([4])
    return features["label"], image


def test_string_input_producer_reader_and_batch_end_after_the_epochs(tmp_path):
    files = [str(tmp_path / "a.tfrecord"), str(tmp_path / "b.tfrecord")]
    _write_examples(files[0], range(0, 5))
    _write_examples(files[1], range(5, 8))
    label, image = _read_labels(files, num_epochs=2, shuffle=False)
    labels, images = tf.train.batch([label, image], batch_size=3,
                                    allow_smaller_final_batch=True)
    assert images.shape.as_list() == [None, 4]
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        batches = _drain(sess, [labels, images])
        coord.request_stop()
        coord.join(threads)
    seen = np.concatenate([b[0] for b in batches])
    # Two epochs over both files in order; the last batch is smaller.
    assert seen.tolist() == list(range(8)) * 2
    assert [len(b[0]) for b in batches] == [3, 3, 3, 3, 3, 1]
    np.testing.assert_array_equal(batches[0][1][1], [1, 1, 1, 1])


def test_shuffle_batch_under_monitored_training_session_sees_every_record(tmp_path):
    files = [str(tmp_path / ("part-%d" % i)) for i in range(3)]
    for i, f in enumerate(files):
        _write_examples(f, range(10 * i, 10 * i + 10))
    label, image = _read_labels(files, num_epochs=1, shuffle=True)
    labels, _ = tf.train.shuffle_batch([label, image], batch_size=4, capacity=20,
                                       min_after_dequeue=5, num_threads=2, seed=3,
                                       allow_smaller_final_batch=True)
    seen = []
    with tf.train.MonitoredTrainingSession() as sess:
        while not sess.should_stop():
            seen.extend(sess.run(labels).tolist())
    assert sorted(seen) == list(range(30))
    assert seen != list(range(30))


def test_text_lines_decoded_as_csv_with_batch_join(tmp_path):
    paths = []
    for i in range(2):
        p = tmp_path / ("rows%d.csv" % i)
        p.write_text("id,size\n" + "".join("%d,%d.5\n" % (10 * i + j, j) for j in range(4)))
        paths.append(str(p))
    queue = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
    readers = []
    for _ in range(2):
        _, line = tf.TextLineReader(skip_header_lines=1).read(queue)
        readers.append(tf.decode_csv(line, [[0], [0.0]]))
    ids, sizes = tf.train.batch_join(readers, batch_size=2, allow_smaller_final_batch=True)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        got = _drain(sess, [ids, sizes])
        coord.request_stop()
        coord.join(threads)
    all_ids = sorted(np.concatenate([g[0] for g in got]).tolist())
    assert all_ids == [0, 1, 2, 3, 10, 11, 12, 13]


def test_slice_and_range_producers_and_fixed_length_records(tmp_path):
    images = np.arange(12, dtype=np.float32).reshape(6, 2)
    labels = np.arange(6, dtype=np.int64)
    image, label = tf.train.slice_input_producer([images, labels], num_epochs=1, shuffle=False)
    number = tf.train.range_input_producer(3, num_epochs=1, shuffle=False).dequeue()
    binary = tmp_path / "records.bin"
    binary.write_bytes(b"HEAD" + bytes(range(12)))
    files = tf.train.string_input_producer([str(binary)], num_epochs=1)
    _, value = tf.FixedLengthRecordReader(record_bytes=3, header_bytes=4).read(files)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        rows = _drain(sess, [image, label])
        numbers = _drain(sess, number)
        values = _drain(sess, value)
        coord.request_stop()
        coord.join(threads)
    assert [r[1] for r in rows] == list(range(6))
    np.testing.assert_array_equal(rows[2][0], [4, 5])
    assert numbers == [0, 1, 2]
    assert values == [bytes([0, 1, 2]), bytes([3, 4, 5]), bytes([6, 7, 8]), bytes([9, 10, 11])]


def test_padding_and_priority_queues():
    q = tf.PaddingFIFOQueue(10, [tf.int32], shapes=[[None]])
    x = tf.placeholder(tf.int32, [None])
    put = q.enqueue([x])
    batch = q.dequeue_many(2)
    assert batch.shape.as_list() == [2, None]
    pq = tf.PriorityQueue(10, [tf.string], shapes=[[]])
    pput = pq.enqueue_many([[3, 1, 2], ["c", "a", "b"]])
    ptake = pq.dequeue_many(3)
    with tf.Session() as sess:
        sess.run(put, {x: [1]})
        sess.run(put, {x: [2, 3, 4]})
        np.testing.assert_array_equal(sess.run(batch), [[1, 0, 0], [2, 3, 4]])
        sess.run(pput)
        priorities, names = sess.run(ptake)
    assert priorities.tolist() == [1, 2, 3]
    assert names.tolist() == [b"a", b"b", b"c"]


def test_producer_refuses_nothing_to_produce():
    with pytest.raises(ValueError, match="requires a non-null input tensor"):
        tf.train.string_input_producer([])
    with pytest.raises(ValueError, match="num_epochs must be > 0"):
        tf.train.limit_epochs(tf.constant([1]), num_epochs=0)
    with pytest.raises(ValueError, match="All shapes must be fully defined"):
        tf.train.batch([tf.placeholder(tf.float32, [None])], batch_size=2)


def test_count_up_to_raises_at_the_limit():
    v = tf.Variable(0, dtype=tf.int64)
    step = v.count_up_to(2)
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(step) == 0
        assert sess.run(step) == 1
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
            sess.run(step)
