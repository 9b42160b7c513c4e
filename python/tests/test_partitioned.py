"""Partitioned variables: partitioners, parts spread by the device setter, embedding_lookup
by both strategies, sparse training of the parts, and checkpoints restored onto another
number of parts."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf


def _offset_filled(shape, dtype, partition_info):
    """Each part filled with its first row's index in the whole."""
    return tf.fill(shape, float(partition_info.var_offset[0]))


def test_parts_are_named_and_placed_round_robin():
    with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
        with tf.variable_scope("emb", partitioner=tf.fixed_size_partitioner(3)):
            table = tf.get_variable("table", [7, 2])
    assert [p.op.name for p in table] == ["emb/table/part_0", "emb/table/part_1",
                                          "emb/table/part_2"]
    assert [p.shape.as_list() for p in table] == [[3, 2], [2, 2], [2, 2]]
    assert [p.device for p in table] == ["/job:ps/task:%d" % i for i in range(3)]
    assert table.get_shape().as_list() == [7, 2]
    assert len(tf.trainable_variables()) == 3


def test_partitioners_choose_the_number_of_parts():
    fixed = tf.fixed_size_partitioner(4)
    assert fixed(shape=tf.TensorShape([10, 3]), dtype=tf.float32) == [4, 1]
    # 1000 x 100 floats = 400 KB: min_slice_size 100 KB allows 4 parts, max_partitions 3.
    minmax = tf.min_max_variable_partitioner(max_partitions=3, min_slice_size=100 << 10)
    assert minmax(tf.TensorShape([1000, 100]), tf.float32) == [3, 1]
    assert tf.min_max_variable_partitioner(max_partitions=8, min_slice_size=1 << 20)(
        tf.TensorShape([1000, 100]), tf.float32) == [1, 1]
    by_size = tf.variable_axis_size_partitioner(max_shard_bytes=1000)
    assert by_size(tf.TensorShape([100, 10]), tf.float32) == [4, 1]  # 25 rows of 40 bytes
    with pytest.raises(NotImplementedError, match="only axis=0"):
        tf.fixed_size_partitioner(2, axis=1)(tf.TensorShape([4, 4]), tf.float32)


def test_embedding_lookup_by_div_and_mod():
    with tf.variable_scope("emb", partitioner=tf.fixed_size_partitioner(3)):
        table = tf.get_variable("table", [7, 1], initializer=_offset_filled)
    ids = tf.constant([0, 3, 6, 4])
    div = tf.nn.embedding_lookup(table, ids, partition_strategy="div")
    mod = tf.nn.embedding_lookup(table, ids)  # TF's default strategy
    whole = tf.Variable(np.arange(5.0), name="whole")
    plain = tf.nn.embedding_lookup(whole, [4, 1])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        # Parts hold rows 0-2 (value 0), 3-4 (value 3), 5-6 (value 5).
        assert sess.run(div).ravel().tolist() == [0, 3, 5, 3]
        # mod: id -> part id % 3, row id // 3: 0 -> p0, 3 -> p0, 6 -> p0, 4 -> p1.
        assert sess.run(mod).ravel().tolist() == [0, 0, 0, 3]
        assert sess.run(plain).tolist() == [4.0, 1.0]
    with pytest.raises(ValueError, match="Unrecognized partition strategy"):
        tf.nn.embedding_lookup(table, ids, partition_strategy="bogus")


def test_training_touches_only_looked_up_rows_and_checkpoints_repartition(tmp_path):
    with tf.variable_scope("emb", partitioner=tf.fixed_size_partitioner(3)):
        table = tf.get_variable("table", [7, 2], initializer=tf.ones_initializer())
    rows = tf.nn.embedding_lookup(table, [0, 4, 6, 4], partition_strategy="div")
    train = tf.train.GradientDescentOptimizer(0.5).minimize(tf.reduce_sum(rows))
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        trained = sess.run(table.as_tensor())
        saver.save(sess, str(tmp_path / "model.ckpt"))
    # d(sum)/d(row) is 1 per lookup: row 4 was looked up twice.
    np.testing.assert_allclose(trained[:, 0], [0.5, 1, 1, 1, 0, 1, 0.5])

    tf.reset_default_graph()
    with tf.variable_scope("emb", partitioner=tf.fixed_size_partitioner(2)):
        table = tf.get_variable("table", [7, 2])
    whole = tf.Variable(np.zeros((7, 2), np.float32), name="emb/table_whole")
    # The checkpoint holds one variable "emb/table": two parts, or one whole, restore it.
    restore_parts = tf.train.Saver([table])
    restore_whole = tf.train.Saver({"emb/table": whole})
    with tf.Session() as sess:
        restore_parts.restore(sess, str(tmp_path / "model.ckpt"))
        restore_whole.restore(sess, str(tmp_path / "model.ckpt"))
        np.testing.assert_array_equal(sess.run(table.as_tensor()), trained)
        np.testing.assert_array_equal(sess.run(whole), trained)


def test_a_partitioned_lookup_takes_ids_of_any_rank_and_keeps_the_row_shape():
    table = tf.get_variable("table", [7, 4], partitioner=tf.fixed_size_partitioner(3),
                            initializer=tf.random_uniform_initializer())
    ids = np.array([[0, 6, 3], [5, 5, 1]], np.int64)
    for strategy in ("mod", "div"):
        rows = tf.nn.embedding_lookup(table, ids, partition_strategy=strategy)
        assert rows.shape.as_list() == [2, 3, 4]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            parts = sess.run(list(table))
            got = sess.run(rows)
        if strategy == "div":
            full = np.concatenate(parts)
        else:  # id i is row i // 3 of part i % 3
            full = np.stack([parts[i % 3][i // 3] for i in range(7)])
        np.testing.assert_array_equal(got, full[ids])
