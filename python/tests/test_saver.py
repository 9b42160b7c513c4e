"""tf.train.Saver, latest_checkpoint and get_checkpoint_state against TF 1.x's documented
behaviour (saver_test.py in TF 1.x): round trips, global_step suffixes, max_to_keep, the
state file, var_list dicts and the errors."""

import os

import numpy as np
import pytest

import tensorweave.compat.v1 as tf
from conftest import in_process_cluster


def _files(directory):
    return sorted(os.listdir(directory))


def _prefixes(directory):
    """The checkpoint prefixes that have an index file."""
    return sorted(f[:-len(".index")] for f in os.listdir(directory) if f.endswith(".index"))


def test_save_restore_round_trip(tmp_path):
    v = tf.Variable([1.0, 2.0], name="v")
    w = tf.Variable(np.arange(6, dtype=np.int64).reshape(2, 3), name="w")
    saver = tf.train.Saver()
    path = str(tmp_path / "model.ckpt")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert saver.save(sess, path) == path
        sess.run([v.assign([7.0, 8.0]), w.assign(np.zeros([2, 3], np.int64))])
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(w), np.arange(6).reshape(2, 3))


def test_restore_in_a_new_session_initializes_the_variables(tmp_path):
    v = tf.Variable([3.0, 4.0], name="v")
    saver = tf.train.Saver()
    path = str(tmp_path / "model")
    with tf.Session() as sess:
        sess.run(v.initializer)
        saver.save(sess, path)
    with tf.Session() as sess:
        assert list(sess.run(tf.report_uninitialized_variables())) == [b"v"]
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(v), [3.0, 4.0])
        assert list(sess.run(tf.report_uninitialized_variables())) == []


def test_restore_into_a_fresh_graph(tmp_path):
    path = str(tmp_path / "model")
    v = tf.Variable([3.0, 4.0], name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(v.initializer)
        saver.save(sess, path)
    with tf.Graph().as_default():
        v2 = tf.Variable([0.0, 0.0], name="v")
        saver2 = tf.train.Saver()
        with tf.Session() as sess:
            saver2.restore(sess, path)
            np.testing.assert_array_equal(sess.run(v2), [3.0, 4.0])


def test_global_step_as_int_variable_or_none(tmp_path):
    tf.Variable(1.0, name="v")
    step = tf.train.get_or_create_global_step()
    saver = tf.train.Saver()
    base = str(tmp_path / "model.ckpt")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert saver.save(sess, base, global_step=3) == base + "-3"
        sess.run(step.assign(17))
        assert saver.save(sess, base, global_step=step) == base + "-17"
        assert saver.save(sess, base, global_step=np.int64(21)) == base + "-21"
        assert saver.save(sess, base) == base
    assert _prefixes(tmp_path) == ["model.ckpt", "model.ckpt-17", "model.ckpt-21",
                                   "model.ckpt-3"]
    assert "checkpoint" in _files(tmp_path)


def test_max_to_keep_deletes_the_oldest(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver(max_to_keep=2)
    base = str(tmp_path / "model")
    with tf.Session() as sess:
        sess.run(v.initializer)
        for step in range(4):
            sess.run(v.assign(float(step)))
            saver.save(sess, base, global_step=step)
        assert saver.last_checkpoints == [base + "-2", base + "-3"]
    assert _prefixes(tmp_path) == ["model-2", "model-3"]
    assert not any(f.startswith("model-0") or f.startswith("model-1")
                   for f in _files(tmp_path))
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == base + "-3"
    assert list(state.all_model_checkpoint_paths) == [base + "-2", base + "-3"]
    with tf.Session() as sess:
        saver.restore(sess, base + "-2")
        assert sess.run(v) == 2.0


def test_max_to_keep_resaving_a_step_moves_it_last(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver(max_to_keep=2)
    base = str(tmp_path / "model")
    with tf.Session() as sess:
        sess.run(v.initializer)
        saver.save(sess, base, global_step=1)
        saver.save(sess, base, global_step=2)
        saver.save(sess, base, global_step=1)
        saver.save(sess, base, global_step=3)
    assert _prefixes(tmp_path) == ["model-1", "model-3"]
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert list(state.all_model_checkpoint_paths) == [base + "-1", base + "-3"]


def test_latest_checkpoint_and_state_are_absolute(tmp_path, monkeypatch):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    monkeypatch.chdir(tmp_path)
    os.mkdir("ckpt")
    with tf.Session() as sess:
        sess.run(v.initializer)
        saver.save(sess, "ckpt/model", global_step=5)
        saver.save(sess, "ckpt/model", global_step=6)
    expected = os.path.join(os.path.realpath(str(tmp_path)), "ckpt", "model-6")
    latest = tf.train.latest_checkpoint("ckpt")
    assert os.path.isabs(latest)
    assert os.path.realpath(latest) == expected
    state = tf.train.get_checkpoint_state("ckpt")
    assert os.path.realpath(state.model_checkpoint_path) == expected
    assert all(os.path.isabs(p) for p in state.all_model_checkpoint_paths)
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == ["model-5",
                                                                              "model-6"]
    assert tf.train.checkpoint_exists(latest)


def test_no_checkpoint_gives_none(tmp_path):
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    assert tf.train.latest_checkpoint(str(tmp_path / "missing")) is None
    assert tf.train.get_checkpoint_state(str(tmp_path / "missing")) is None
    assert not tf.train.checkpoint_exists(str(tmp_path / "model"))


def test_restoring_a_missing_checkpoint_raises_value_error(tmp_path):
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    missing = str(tmp_path / "nothing-here")
    with tf.Session() as sess:
        with pytest.raises(ValueError,
                           match="The passed save_path is not a valid checkpoint: "):
            saver.restore(sess, missing)
        with pytest.raises(ValueError, match="Can't load save_path when it is None."):
            saver.restore(sess, None)
        # A checkpoint in a directory that does not exist: the same, and no directory made.
        with pytest.raises(ValueError, match="not a valid checkpoint"):
            saver.restore(sess, str(tmp_path / "no_dir" / "model"))
        assert not (tmp_path / "no_dir").exists()


def test_saving_into_a_missing_directory_raises_value_error(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(ValueError, match="Parent directory of .* doesn't exist, "
                                             "can't save."):
            saver.save(sess, str(tmp_path / "missing" / "model"))


def test_var_list_dict_restores_by_checkpoint_name(tmp_path):
    a = tf.Variable([1.0, 2.0], name="a")
    b = tf.Variable([3.0, 4.0], name="b")
    path = str(tmp_path / "model")
    # Save a under "first", b under "second"; restore them crossed over.
    saver = tf.train.Saver({"first": a, "second": b})
    crossed = tf.train.Saver({"first": b, "second": a})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, path)
        crossed.restore(sess, path)
        np.testing.assert_array_equal(sess.run(a), [3.0, 4.0])
        np.testing.assert_array_equal(sess.run(b), [1.0, 2.0])


def test_var_list_dict_into_variables_of_other_names(tmp_path):
    path = str(tmp_path / "model")
    v = tf.Variable([1.0, 2.0], name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        tf.train.Saver({"weights": v}).save(sess, path)
    with tf.Graph().as_default():
        other = tf.Variable([0.0, 0.0], name="something_else")
        untouched = tf.Variable([9.0, 9.0], name="untouched")
        with tf.Session() as sess:
            sess.run(untouched.initializer)
            tf.train.Saver({"weights": other}).restore(sess, path)
            np.testing.assert_array_equal(sess.run(other), [1.0, 2.0])
            np.testing.assert_array_equal(sess.run(untouched), [9.0, 9.0])


def test_var_list_as_a_list_saves_only_those(tmp_path):
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    path = str(tmp_path / "model")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver([a]).save(sess, path)
        sess.run([a.assign(5.0), b.assign(6.0)])
        tf.train.Saver([a]).restore(sess, path)
        assert sess.run(a) == 1.0
        assert sess.run(b) == 6.0
        # A checkpoint without b cannot restore b.
        with pytest.raises(tf.errors.NotFoundError):
            tf.train.Saver([a, b]).restore(sess, path)


def test_no_variables_to_save():
    with pytest.raises(ValueError, match="No variables to save"):
        tf.train.Saver()
    with pytest.raises(ValueError, match="No variables to save"):
        tf.train.Saver(var_list=[])
    assert tf.train.Saver(allow_empty=True) is not None


def test_empty_saver_with_allow_empty_saves_nothing(tmp_path):
    saver = tf.train.Saver(allow_empty=True)
    with tf.Session() as sess:
        assert saver.save(sess, str(tmp_path / "model")) is None
    assert _files(tmp_path) == []


def test_a_name_saved_twice_is_refused():
    b = tf.Variable(1.0, name="same")
    with pytest.raises(ValueError, match="At least two variables have the same name: same"):
        tf.train.Saver([b, b])


def test_var_list_entries_must_be_variables():
    t = tf.constant(1.0)
    with pytest.raises(TypeError):
        tf.train.Saver([t])


def test_saver_after_finalize_saves_in_any_directory(tmp_path):
    """The Saver's ops name no directory (this process writes the files), so a finalized
    graph's Saver saves and restores anywhere, as TF's does."""
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    tf.get_default_graph().finalize()
    with tf.Session() as sess:
        sess.run(v.initializer)
        for directory in (tmp_path / "a", tmp_path / "b"):
            directory.mkdir()
            assert saver.save(sess, str(directory / "model")) == str(directory / "model")
            saver.restore(sess, str(directory / "model"))


def test_a_variable_tasks_saver_after_finalize_needs_its_directory_built(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver(write_on_variable_tasks=True)
    built = tmp_path / "built"
    built.mkdir()
    saver.build(str(built))
    tf.get_default_graph().finalize()
    with tf.Session() as sess:
        sess.run(v.initializer)
        # The directory built before finalize works.
        assert saver.save(sess, str(built / "model")) == str(built / "model")
        with pytest.raises(RuntimeError, match="finalized"):
            saver.save(sess, str(tmp_path / "model"))


def test_a_checkpoint_of_two_ps_tasks_restores_onto_one(tmp_path, monkeypatch):
    """Saved by a cluster whose partitioned table and other variables are spread over two
    ps tasks (each writes its own data file), restored by a cluster with one."""
    monkeypatch.setenv("TW_ALLOWED_DIRECTORIES", str(tmp_path))
    servers = in_process_cluster(2)
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        with tf.variable_scope("emb", partitioner=tf.fixed_size_partitioner(2)):
            table = tf.get_variable("table", [5, 2])
        bias = tf.Variable([1.0, 2.0], name="bias")
    assert sorted({p.device for p in table}) == ["/job:ps/task:0", "/job:ps/task:1"]
    saver = tf.train.Saver()
    with tf.Session(servers[-1].target) as sess:
        sess.run(tf.global_variables_initializer())
        saved = sess.run([table.as_tensor(), bias])
        prefix = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=7)
    assert len(list(tmp_path.glob("model.ckpt-7.data-*-of-00002"))) == 2
    for server in servers:
        server.stop()

    tf.reset_default_graph()
    servers = in_process_cluster(1)
    with tf.device(tf.train.replica_device_setter(ps_tasks=1)):
        with tf.variable_scope("emb", partitioner=tf.fixed_size_partitioner(3)):
            table = tf.get_variable("table", [5, 2])
        bias = tf.Variable([0.0, 0.0], name="bias")
    with tf.Session(servers[-1].target) as sess:
        tf.train.Saver().restore(sess, prefix)
        restored = sess.run([table.as_tensor(), bias])
    np.testing.assert_array_equal(restored[0], saved[0])
    np.testing.assert_array_equal(restored[1], saved[1])
    for server in servers:
        server.stop()
