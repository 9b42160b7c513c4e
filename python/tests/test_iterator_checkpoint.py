"""Checkpointable iterators (tf.data.experimental.make_saveable_from_iterator): a Saver keeps
an iterator's place, a restore in a fresh session goes on with the elements that followed
the save, and a trainer killed with SIGKILL and started again sees every example of the
epoch exactly once among the steps its checkpoints kept."""

import collections
import os
import signal
import subprocess
import sys

import pytest

import tensorweave.compat.v1 as tf
from conftest import ROOT, free_address, python_env

PROGRAM = ROOT / "python" / "tests" / "programs" / "resumable_input.py"


def _rest(sess, element):
    out = []
    while True:
        try:
            out.append(sess.run(element).tolist())
        except tf.errors.OutOfRangeError:
            return out


def test_saver_keeps_the_iterators_place(tmp_path):
    dataset = tf.data.Dataset.range(30).shuffle(10).map(lambda x: x * 2).batch(4)
    iterator = dataset.make_initializable_iterator()
    element = iterator.get_next()
    saveable = tf.data.experimental.make_saveable_from_iterator(iterator)
    tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS, saveable)
    saver = tf.train.Saver()  # the default var_list takes the collection's saveables
    prefix = str(tmp_path / "model.ckpt")
    with tf.Session() as sess:
        sess.run(iterator.initializer)
        first = [sess.run(element).tolist() for _ in range(3)]
        saver.save(sess, prefix)
        expected = _rest(sess, element)
    assert sorted(sum(first + expected, [])) == list(range(0, 60, 2))
    with tf.Session() as sess:  # no initializer run: the restore rebuilds the pipeline
        saver.restore(sess, prefix)
        assert _rest(sess, element) == expected


def test_saver_takes_the_saveable_in_its_var_list(tmp_path):
    iterator = tf.data.Dataset.range(5).make_one_shot_iterator()
    element = iterator.get_next()
    saver = tf.train.Saver([tf.data.experimental.make_saveable_from_iterator(iterator)])
    with tf.Session() as sess:
        assert sess.run(element) == 0
        prefix = saver.save(sess, str(tmp_path / "it"))
        assert sess.run(element) == 1
    with tf.Session() as sess:
        saver.restore(sess, prefix)
        assert [sess.run(element) for _ in range(4)] == [1, 2, 3, 4]


def _write_records(path, first, count):
    with tf.python_io.TFRecordWriter(str(path)) as writer:
        for i in range(first, first + count):
            example = tf.train.Example(features=tf.train.Features(feature={
                "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))}))
            writer.write(example.SerializeToString())


def _run(args, log, kill_after_step=None):
    """Runs the program; with kill_after_step, SIGKILLs it once it has printed that step.
    Returns the step it started from."""
    proc = subprocess.Popen([sys.executable, str(PROGRAM)] + args, env=python_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if (kill_after_step is not None and line.startswith("step ") and
                    int(line.split()[1]) >= kill_after_step):
                os.kill(proc.pid, signal.SIGKILL)
                break
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out = "".join(lines)
    if kill_after_step is None:
        assert proc.returncode == 0, out
    else:
        assert proc.returncode == -signal.SIGKILL, out
    starts = [int(line.split()[1]) for line in lines if line.startswith("start ")]
    assert len(starts) == 1, out
    return starts[0], out


@pytest.mark.parametrize("distributed", [False, True], ids=["local", "ps_and_worker"])
def test_killed_trainer_resumes_its_input_where_the_checkpoint_left_it(tmp_path, distributed):
    """Local, or as the chief worker of a cluster whose ps task keeps running (and keeps
    the global step the restore puts back)."""
    files = [tmp_path / "part-0.tfrecord", tmp_path / "part-1.tfrecord"]
    _write_records(files[0], 0, 100)
    _write_records(files[1], 100, 100)
    ckpt, log = tmp_path / "ckpt", tmp_path / "steps.log"
    args = [str(ckpt), str(log)] + [str(f) for f in files]
    ps = None
    if distributed:
        addresses = "%s,%s" % (free_address(), free_address())
        args.insert(0, "--cluster=" + addresses)
        ps = subprocess.Popen([sys.executable, str(PROGRAM), "--ps=" + addresses],
                              env=python_env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        start, first_out = _run(args, log, kill_after_step=12)
        assert start == 0, first_out
        restored, second_out = _run(args, log)
        # A checkpoint every 5 steps; the kill may land a few steps after step 12.
        assert 10 <= restored < 50 and restored % 5 == 0, second_out
        assert ps is None or ps.poll() is None, "the ps task ended"
    finally:
        if ps is not None:
            ps.kill()
            ps.wait()

    # The steps the first run logged up to the checkpoint it was restored from, then all
    # of the second run's: every id of the epoch exactly once.
    entries = [line.split() for line in log.read_text().splitlines()]
    kept, after_restart, resumed = [], [], False
    for i, entry in enumerate(entries):
        step = int(entry[0])
        if not resumed and i > 0 and step <= int(entries[i - 1][0]):
            resumed = True  # the second run's first step
        if resumed:
            after_restart.append(entry)
        elif step <= restored:
            kept.append(entry)
    assert after_restart and int(after_restart[0][0]) == restored + 1, log.read_text()
    ids = [int(i) for entry in kept + after_restart for i in entry[1:]]
    repeated = [i for i, n in collections.Counter(ids).items() if n > 1]
    assert not repeated, "seen twice: %s" % repeated
    assert sorted(ids) == list(range(200)), "skipped: %s" % sorted(set(range(200)) - set(ids))
