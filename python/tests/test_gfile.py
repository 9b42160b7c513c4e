"""tf.gfile and tf.io.gfile on local files, with TF's errors and overwrite rules."""

import pytest

import tensorweave.compat.v1 as tf


def test_write_read_iterate_and_size(tmp_path):
    path = str(tmp_path / "a.txt")
    with tf.gfile.GFile(path, "w") as f:
        f.write("one\n")
        f.write(b"two\n")  # bytes into a text file, as TF allows
    assert tf.gfile.Exists(path) and not tf.gfile.IsDirectory(path)
    with tf.gfile.Open(path) as f:
        assert list(f) == ["one\n", "two\n"]
    with tf.gfile.GFile(path, "rb") as f:
        assert f.read(3) == b"one"
        assert f.tell() == 3
        f.seek(0)
        assert f.readline() == b"one\n"
    assert tf.gfile.GFile(path).size() == 8
    assert tf.gfile.Stat(path).length == 8 and not tf.gfile.Stat(path).is_directory
    with tf.gfile.GFile(path, "a") as f:
        f.write("three\n")
    assert tf.io.gfile.GFile(path).readlines() == ["one\n", "two\n", "three\n"]


def test_missing_files_are_not_found_errors(tmp_path):
    missing = str(tmp_path / "missing")
    f = tf.gfile.GFile(missing)  # opened lazily, as TF's
    with pytest.raises(tf.errors.NotFoundError, match="missing"):
        f.read()
    for call in (tf.gfile.Remove, tf.gfile.ListDirectory, tf.gfile.DeleteRecursively,
                 tf.gfile.Stat):
        with pytest.raises(tf.errors.NotFoundError):
            call(missing)
    assert list(tf.gfile.Walk(missing)) == []
    with pytest.raises(tf.errors.UnimplementedError, match="gs"):
        tf.gfile.Exists("gs://bucket/x")


def test_directories_glob_walk_rename_and_copy(tmp_path):
    root = str(tmp_path / "r")
    tf.gfile.MakeDirs(root + "/x/y")
    tf.gfile.MakeDirs(root + "/x/y")  # existing: fine
    with pytest.raises(tf.errors.AlreadyExistsError):
        tf.gfile.MkDir(root + "/x")
    for name in ("a.ckpt", "b.ckpt", "c.txt"):
        with tf.gfile.GFile(root + "/" + name, "w") as f:
            f.write(name)
    assert sorted(tf.gfile.ListDirectory(root)) == ["a.ckpt", "b.ckpt", "c.txt", "x"]
    assert sorted(tf.gfile.Glob(root + "/*.ckpt")) == [root + "/a.ckpt", root + "/b.ckpt"]
    walked = {d: (sorted(sub), sorted(files)) for d, sub, files in tf.io.gfile.walk(root)}
    assert walked[root] == (["x"], ["a.ckpt", "b.ckpt", "c.txt"])
    assert walked[root + "/x/y"] == ([], [])
    with pytest.raises(tf.errors.AlreadyExistsError):
        tf.gfile.Rename(root + "/a.ckpt", root + "/b.ckpt")
    tf.gfile.Rename(root + "/a.ckpt", root + "/b.ckpt", overwrite=True)
    assert tf.gfile.GFile(root + "/b.ckpt").read() == "a.ckpt"
    with pytest.raises(tf.errors.AlreadyExistsError):
        tf.gfile.Copy(root + "/c.txt", root + "/b.ckpt")
    tf.io.gfile.copy(root + "/c.txt", root + "/d.txt")
    assert tf.io.gfile.GFile(root + "/d.txt").read() == "c.txt"
    tf.gfile.DeleteRecursively(root)
    assert not tf.io.gfile.exists(root)


def test_io_has_the_record_names_and_no_others():
    assert tf.io.TFRecordWriter is tf.python_io.TFRecordWriter
    with pytest.raises(AttributeError, match="module 'tf.io' has no attribute 'no_such_name'"):
        tf.io.no_such_name  # noqa: B018
