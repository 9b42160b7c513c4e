"""tf.train.init_from_checkpoint and the RestoreV2 op under it: variables whose initializers
read their values from a checkpoint (fine-tuning programs call it in their model_fn)."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf

W = np.arange(12, dtype=np.float32).reshape(4, 3)
B = np.array([0.5, -1.0, 2.0], dtype=np.float32)


@pytest.fixture
def checkpoint(tmp_path):
    with tf.Graph().as_default():
        with tf.variable_scope("old"):
            tf.get_variable("w", initializer=W)
            tf.get_variable("b", initializer=B)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"), global_step=5)
    return str(tmp_path)  # a directory: its latest checkpoint


def test_a_scope_maps_onto_another_scope(checkpoint):
    with tf.variable_scope("new"):
        w = tf.get_variable("w", [4, 3])
        b = tf.get_variable("b", [3])
    tf.train.init_from_checkpoint(checkpoint, {"old/": "new/"})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(w), W)
        np.testing.assert_array_equal(sess.run(b), B)
        np.testing.assert_array_equal(sess.run(w.initial_value), W)


def test_one_tensor_onto_a_variable_or_a_partitioned_one(checkpoint):
    plain = tf.get_variable("plain", [3])
    parted = tf.get_variable("parted", [4, 3], partitioner=tf.fixed_size_partitioner(3))
    untouched = tf.get_variable("untouched", [2], initializer=tf.ones_initializer())
    tf.train.init_from_checkpoint(checkpoint, {"old/b": plain, "old/w": "parted"})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(plain), B)
        np.testing.assert_array_equal(sess.run(tf.concat(list(parted), 0)), W)
        np.testing.assert_array_equal(sess.run(untouched), [1.0, 1.0])


def test_missing_tensors_and_other_shapes_are_refused(checkpoint):
    v = tf.get_variable("v", [5, 3])
    with pytest.raises(ValueError, match="Tensor old/nope is not found"):
        tf.train.init_from_checkpoint(checkpoint, {"old/nope": v})
    with pytest.raises(ValueError, match=r"Shape of variable v.*doesn't match.*old/w"):
        tf.train.init_from_checkpoint(checkpoint, {"old/w": v})
    with tf.variable_scope("other"):
        tf.get_variable("extra", [1])
    with pytest.raises(ValueError, match="Tensor old/extra .* is not found"):
        tf.train.init_from_checkpoint(checkpoint, {"old/": "other/"})
    with pytest.raises(ValueError, match="should map to scope only"):
        tf.train.init_from_checkpoint(checkpoint, {"old/w": "other/"})


def test_restore_v2_reads_rows_and_refuses_other_slices(checkpoint):
    prefix = tf.train.latest_checkpoint(checkpoint)
    # (tensorweave's raw_ops give an op's only output as a tensor, not a list of one)
    rows = tf.raw_ops.RestoreV2(prefix=prefix, tensor_names=["old/w"],
                                shape_and_slices=["4 3 1,2:-"], dtypes=[tf.float32])
    columns = tf.raw_ops.RestoreV2(prefix=prefix, tensor_names=["old/w"],
                                   shape_and_slices=["4 3 -:0,1"], dtypes=[tf.float32])
    wrong_type = tf.raw_ops.RestoreV2(prefix=prefix, tensor_names=["old/b"],
                                      shape_and_slices=[""], dtypes=[tf.int32])
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(rows), W[1:3])
        with pytest.raises(tf.errors.UnimplementedError, match="dimension 1"):
            sess.run(columns)
        with pytest.raises(tf.errors.InvalidArgumentError, match="old/b"):
            sess.run(wrong_type)


def test_an_embedding_column_starts_from_its_checkpoint(tmp_path):
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    with tf.Graph().as_default():
        tf.get_variable("pretrained/table", initializer=table)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = tf.train.Saver().save(sess, str(tmp_path / "pretrained"))
    column = tf.feature_column.embedding_column(
        tf.feature_column.categorical_column_with_identity("id", 4), 3, combiner="sum",
        ckpt_to_load_from=prefix, tensor_name_in_ckpt="pretrained/table")
    layer = tf.feature_column.input_layer({"id": tf.constant([[2], [0]], tf.int64)}, [column])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(layer), table[[2, 0]])
    with pytest.raises(ValueError, match="Must specify both"):
        tf.feature_column.embedding_column(
            tf.feature_column.categorical_column_with_identity("id", 4), 3,
            ckpt_to_load_from=prefix)
