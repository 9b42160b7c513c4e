"""SparseTensor elements in tf.data, as TF 1.x programs make them: a VarLenFeature parsed
per record then batched (one rank up, the batch's place first in each index, the dense
shape the largest), parsed per batch and passed through, read by a later map function,
from_tensors of a SparseTensor, and TF's refusals (padded_batch, unbatch)."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf
from test_data import _drain


def _record(label, tags):
    return tf.train.Example(features=tf.train.Features(feature={
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
        "tags": tf.train.Feature(int64_list=tf.train.Int64List(value=tags)),
    })).SerializeToString()


SPEC = {"label": tf.FixedLenFeature([], tf.int64), "tags": tf.VarLenFeature(tf.int64)}
RECORDS = [_record(0, [5]), _record(1, []), _record(2, [7, 8, 9]), _record(3, [1, 2]),
           _record(4, [3])]


def test_per_record_var_len_features_batch_as_one_sparse_tensor():
    dataset = (tf.data.Dataset.from_tensor_slices(np.array(RECORDS, dtype=object))
               .map(lambda r: tf.parse_single_example(r, SPEC), num_parallel_calls=2)
               .batch(2).prefetch(1))
    assert dataset.output_classes["tags"] is tf.SparseTensor
    assert dataset.output_classes["label"] is tf.Tensor
    assert dataset.output_types["tags"] == tf.int64
    assert dataset.output_shapes["tags"].as_list() == [None, None]
    element = dataset.make_one_shot_iterator().get_next()
    assert isinstance(element["tags"], tf.SparseTensor)
    with tf.Session() as sess:
        batches = _drain(sess, element)
    assert [b["label"].tolist() for b in batches] == [[0, 1], [2, 3], [4]]
    first, second, last = (b["tags"] for b in batches)
    assert isinstance(first, tf.SparseTensorValue)
    np.testing.assert_array_equal(first.indices, [[0, 0]])
    np.testing.assert_array_equal(first.values, [5])
    np.testing.assert_array_equal(first.dense_shape, [2, 1])
    np.testing.assert_array_equal(second.indices, [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]])
    np.testing.assert_array_equal(second.values, [7, 8, 9, 1, 2])
    np.testing.assert_array_equal(second.dense_shape, [2, 3])
    np.testing.assert_array_equal(last.dense_shape, [1, 1])


def test_a_later_map_reads_the_sparse_component_and_shuffle_keeps_it_whole():
    dataset = (tf.data.Dataset.from_tensor_slices(np.array(RECORDS, dtype=object))
               .map(lambda r: tf.parse_single_example(r, SPEC))
               .shuffle(5, seed=3)
               .map(lambda f: (f["label"], tf.reduce_sum(f["tags"].values),
                               f["tags"].dense_shape[0])))
    label, total, length = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        got = sorted(tuple(int(v) for v in e) for e in _drain(sess, (label, total, length)))
    assert got == [(0, 5, 1), (1, 0, 0), (2, 24, 3), (3, 3, 2), (4, 3, 1)]


def test_parsed_per_batch_the_sparse_tensor_passes_through():
    dataset = (tf.data.Dataset.from_tensor_slices(np.array(RECORDS, dtype=object))
               .batch(3)
               .map(lambda r: tf.parse_example(r, SPEC)))
    iterator = dataset.make_initializable_iterator()
    element = iterator.get_next()
    dense = tf.sparse_tensor_to_dense(element["tags"])
    with tf.Session() as sess:
        sess.run(iterator.initializer)
        first = sess.run(dense)
    np.testing.assert_array_equal(first, [[5, 0, 0], [0, 0, 0], [7, 8, 9]])


def test_from_tensors_of_a_sparse_tensor_and_a_reinitializable_iterator():
    sparse = tf.SparseTensor(indices=[[0, 1], [2, 0]], values=[1.5, 2.5], dense_shape=[3, 2])
    dataset = tf.data.Dataset.from_tensors(sparse).repeat(2)
    assert dataset.output_classes is tf.SparseTensor
    assert dataset.output_shapes.as_list() == [3, 2]
    iterator = tf.data.Iterator.from_structure(dataset.output_types, dataset.output_shapes,
                                               output_classes=dataset.output_classes)
    init = iterator.make_initializer(dataset)
    element = iterator.get_next()
    with tf.Session() as sess:
        sess.run(init)
        values = _drain(sess, element)
    assert len(values) == 2
    np.testing.assert_array_equal(values[1].indices, [[0, 1], [2, 0]])
    np.testing.assert_allclose(values[1].values, [1.5, 2.5])
    dense = tf.data.Dataset.from_tensors(tf.constant([[1.0, 2.0]]))
    with pytest.raises(TypeError, match="output classes"):
        iterator.make_initializer(dense)  # the same types, but dense


def test_padded_batch_and_unbatch_refuse_sparse_components_as_tf_does():
    dataset = (tf.data.Dataset.from_tensor_slices(np.array(RECORDS, dtype=object))
               .map(lambda r: tf.parse_single_example(r, SPEC)["tags"]))
    with pytest.raises(TypeError, match="padded sparse tensors"):
        dataset.padded_batch(2, [None])
    with pytest.raises(TypeError, match="unbatch is not supported"):
        dataset.batch(2).unbatch()
    with pytest.raises(NotImplementedError, match="from_tensor_slices of a SparseTensor"):
        tf.data.Dataset.from_tensor_slices(
            tf.SparseTensor(indices=[[0]], values=[1], dense_shape=[2]))


def _sequence_example():
    ex = tf.train.SequenceExample()
    ex.context.feature["length"].int64_list.value.append(3)
    ex.context.feature["tags"].bytes_list.value.extend([b"a", b"b"])
    for step in ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0]):
        ex.feature_lists.feature_list["frames"].feature.add().float_list.value.extend(step)
    for words in ([b"x"], [], [b"y", b"z"]):
        ex.feature_lists.feature_list["words"].feature.add().bytes_list.value.extend(words)
    return ex.SerializeToString()

def test_parse_single_sequence_example_context_and_feature_lists():
    """TF 1.x's parse_single_sequence_example: context FixedLen and VarLen features, feature
    lists as [steps, shape] tensors (allow_missing: no steps) and [steps, longest] sparse."""
    context, sequences = tf.parse_single_sequence_example(
        _sequence_example(),
        context_features={"length": tf.FixedLenFeature([], tf.int64),
                          "tags": tf.VarLenFeature(tf.string),
                          "missing": tf.FixedLenFeature([2], tf.float32, default_value=[7.0, 8.0])},
        sequence_features={"frames": tf.FixedLenSequenceFeature([2], tf.float32),
                           "words": tf.VarLenFeature(tf.string),
                           "absent": tf.FixedLenSequenceFeature([], tf.int64, allow_missing=True)})
    with tf.Session() as sess:
        c, s = sess.run([context, sequences])
    assert c["length"] == 3
    assert c["tags"].values.tolist() == [b"a", b"b"] and c["tags"].dense_shape.tolist() == [2]
    np.testing.assert_array_equal(c["missing"], [7.0, 8.0])
    np.testing.assert_array_equal(s["frames"], [[1, 2], [3, 4], [5, 6]])
    assert s["words"].indices.tolist() == [[0, 0], [2, 0], [2, 1]]
    assert s["words"].values.tolist() == [b"x", b"y", b"z"]
    assert s["words"].dense_shape.tolist() == [3, 2]
    assert s["absent"].shape == (0,)
    required = tf.parse_single_sequence_example(
        _sequence_example(), sequence_features={"nope": tf.FixedLenSequenceFeature([], tf.int64)})
    wrong_type = tf.parse_single_sequence_example(
        _sequence_example(), context_features={"length": tf.FixedLenFeature([], tf.float32)})
    wrong_size = tf.parse_single_sequence_example(
        _sequence_example(), sequence_features={"frames": tf.FixedLenSequenceFeature([3],
                                                                                  tf.float32)})
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Feature list 'nope' is required"):
            sess.run(required[1])
        with pytest.raises(tf.errors.InvalidArgumentError, match="Data types don't match"):
            sess.run(wrong_type[0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="Number of values != expected"):
            sess.run(wrong_size[1])
        with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse example"):
            sess.run(tf.parse_single_sequence_example(
                b"\xff\xff", context_features={"x": tf.VarLenFeature(tf.int64)})[0])
