"""tf.summary (scalar, histogram, merge, merge_all, FileWriter), SummarySaverHook and
MonitoredTrainingSession's summaries, checked by reading the event files back with a
reader written here from the published formats alone (TFRecord framing with masked
CRC32C; TensorFlow's event.proto and summary.proto field numbers), sharing no code with
the writer."""

import os
import re
import socket
import struct
import subprocess
import sys
import time

import numpy as np
import pytest

import tensorweave.compat.v1 as tf
from tf_file_readers import read_varint  # protobuf varints, from the wire format
from conftest import BUILD, ROOT, python_env
from tfrecord_format import crc32c, masked_crc

DBL_MAX = 1.7976931348623157e308


# ---- an independent reader: CRC32C, TFRecord framing, protobuf wire format ----

class CorruptRecord(Exception):
    pass


def read_records(path):
    """Every record's data, in order; CorruptRecord naming the file and byte offset for a
    torn record or a CRC that does not match."""
    with open(path, "rb") as f:
        blob = f.read()
    offset, records = 0, []
    while offset < len(blob):
        if len(blob) - offset < 12:
            raise CorruptRecord("%s: truncated header at offset %d" % (path, offset))
        header = blob[offset:offset + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", blob[offset + 8:offset + 12])
        if length_crc != masked_crc(header):
            raise CorruptRecord("%s: bad length CRC at offset %d" % (path, offset))
        end = offset + 12 + length + 4
        if end > len(blob):
            raise CorruptRecord("%s: truncated record at offset %d" % (path, offset))
        data = blob[offset + 12:offset + 12 + length]
        (data_crc,) = struct.unpack("<I", blob[end - 4:end])
        if data_crc != masked_crc(data):
            raise CorruptRecord("%s: bad data CRC at offset %d" % (path, offset))
        records.append(data)
        offset = end
    return records


def fields(buf):
    """(field number, wire type, raw value) of each field of a message."""
    out, i = [], 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = read_varint(buf, i)
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 2:
            n, i = read_varint(buf, i)
            value, i = buf[i:i + n], i + n
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wire)
        out.append((number, wire, value))
    return out


def _doubles(wire, raw):
    if wire == 1:
        return list(struct.unpack("<d", raw))
    return list(struct.unpack("<%dd" % (len(raw) // 8), raw))  # packed


def decode_histogram(buf):
    h = {"bucket_limit": [], "bucket": []}
    names = {1: "min", 2: "max", 3: "num", 4: "sum", 5: "sum_squares"}
    for number, wire, raw in fields(buf):
        if number in names:
            assert wire == 1
            h[names[number]] = struct.unpack("<d", raw)[0]
        elif number == 6:
            h["bucket_limit"] += _doubles(wire, raw)
        elif number == 7:
            h["bucket"] += _doubles(wire, raw)
    return h


def decode_summary(buf):
    """[(tag, simple_value or histogram dict)] of a Summary."""
    values = []
    for number, _, raw in fields(buf):
        assert number == 1  # repeated Value value = 1
        tag, value = None, None
        for n, wire, v in fields(raw):
            if n == 1:
                tag = v.decode()
            elif n == 2:
                assert wire == 5
                value = struct.unpack("<f", v)[0]
            elif n == 5:
                value = decode_histogram(v)
        values.append((tag, value))
    return values


def decode_event(buf):
    event = {"step": 0}
    for number, wire, raw in fields(buf):
        if number == 1:
            assert wire == 1
            event["wall_time"] = struct.unpack("<d", raw)[0]
        elif number == 2:
            event["step"] = raw
        elif number == 3:
            event["file_version"] = raw.decode()
        elif number == 4:
            event["graph_def"] = raw
        elif number == 5:
            event["summary"] = decode_summary(raw)
        elif number == 7:
            event["session_log"] = dict((n, v) for n, _, v in fields(raw)).get(1, 0)
    return event


def event_files(logdir):
    return sorted(os.path.join(logdir, f) for f in os.listdir(logdir) if "tfevents" in f)


def read_events(logdir):
    files = event_files(logdir)
    assert len(files) == 1, files
    return [decode_event(r) for r in read_records(files[0])]


def scalars(events, tag):
    """{step: value} of the scalar summaries tagged `tag`."""
    out = {}
    for e in events:
        for t, v in e.get("summary", []):
            if t == tag:
                out[e["step"]] = v
    return out


@pytest.fixture(autouse=True)
def close_cached_writers():
    yield
    tf.summary.FileWriterCache.clear()


# ---- the reader itself, against known bytes ----

def test_crc32c_matches_the_published_check_values():
    # RFC 3720 (iSCSI) B.4 test vectors.
    assert crc32c(bytes(32)) == 0x8A9136AA
    assert crc32c(bytes([0xFF] * 32)) == 0x62A8AB43
    assert crc32c(b"123456789") == 0xE3069283


# ---- FileWriter and the ops, read back ----

def test_scalars_and_histograms_read_back(tmp_path):
    x = tf.placeholder(tf.float32, shape=[None], name="x")
    tf.summary.scalar("loss", tf.reduce_mean(x))
    tf.summary.histogram("weights", x)
    merged = tf.summary.merge_all()
    before = time.time()
    with tf.Session() as sess:
        writer = tf.summary.FileWriter(str(tmp_path / "run"))
        feeds = {0: [1.0, 1.0, 2.0, -3.0], 10: [0.5, 0.5], 20: [4.0]}
        for step, values in feeds.items():
            writer.add_summary(sess.run(merged, {x: values}), global_step=step)
        writer.close()

    name = os.path.basename(event_files(str(tmp_path / "run"))[0])
    assert re.fullmatch(r"events\.out\.tfevents\.\d{10}\.%s" % re.escape(socket.gethostname()),
                        name), name
    events = read_events(str(tmp_path / "run"))
    assert events[0]["file_version"] == "brain.Event:2"
    assert before - 1 <= events[0]["wall_time"] <= time.time() + 1
    assert [e["step"] for e in events[1:]] == [0, 10, 20]
    assert scalars(events, "loss") == {0: 0.25, 10: 0.5, 20: 4.0}

    histograms = scalars(events, "weights")
    h = histograms[0]
    assert (h["min"], h["max"], h["num"], h["sum"], h["sum_squares"]) == (-3, 2, 4, 1, 15)
    assert len(h["bucket"]) == len(h["bucket_limit"])
    assert sum(h["bucket"]) == 4
    assert h["bucket_limit"] == sorted(h["bucket_limit"])
    assert h["bucket_limit"][-1] == DBL_MAX
    # The two 1.0s share a bucket of TensorFlow's: [1e-12 * 1.1^k, 1e-12 * 1.1^(k+1)).
    counts = dict(zip(h["bucket_limit"], h["bucket"]))
    (limit,) = [lim for lim, c in counts.items() if c == 2]
    assert 1.0 < limit <= 1.1
    assert histograms[20]["num"] == 1 and histograms[20]["max"] == 4


def test_summary_protos_and_graph_are_accepted(tmp_path):
    class FakeSummary:  # anything with SerializeToString, as TF's Summary message
        def SerializeToString(self):  # noqa: N802
            # Summary{value {tag: "a" simple_value: 2.0}}, encoded by hand.
            value = b"\x0a\x01a" + b"\x15" + struct.pack("<f", 2.0)
            return b"\x0a" + bytes([len(value)]) + value

    tf.constant(1.0, name="c")
    with tf.summary.FileWriter(str(tmp_path), graph=tf.get_default_graph()) as writer:
        writer.add_summary(FakeSummary(), 5)
        writer.add_summary(np.array(FakeSummary().SerializeToString(), dtype=object))
    events = read_events(str(tmp_path))
    graph = [e for e in events if "graph_def" in e]
    assert len(graph) == 1
    node = dict((n, v) for n, _, v in fields(fields(graph[0]["graph_def"])[0][2]))
    assert node[1] == b"c" and node[2] == b"Const"  # NodeDef name = 1, op = 2
    assert scalars(events, "a") == {5: 2.0, 0: 2.0}


def test_hand_made_summaries(tmp_path):
    """TF programs write values computed outside the graph with tf.Summary."""
    summary = tf.Summary(value=[tf.Summary.Value(tag="eval/accuracy", simple_value=0.875),
                                tf.summary.Summary.Value(tag="eval/loss", simple_value=0.5)])
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_summary(summary, global_step=40)
    events = read_events(str(tmp_path))
    assert events[1]["step"] == 40
    assert events[1]["summary"] == [("eval/accuracy", 0.875), ("eval/loss", 0.5)]


def test_names_tags_and_collections():
    t = tf.constant(1.0)
    loss = tf.summary.scalar("loss", t)
    again = tf.summary.scalar("loss", t)
    family = tf.summary.scalar("x", t, family="train")
    odd = tf.summary.scalar("a b", t, collections=["mine"])
    hist = tf.summary.histogram("w", [1.0, 2.0])
    assert (loss.op.name, loss.dtype, loss.shape.as_list()) == ("loss", tf.string, [])
    assert again.op.name == "loss_1"
    assert family.op.name == "train/x"
    assert hist.op.type == "HistogramSummary"
    assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [loss, again, family, hist]
    assert tf.get_collection("mine") == [odd]
    merged = tf.summary.merge_all()
    assert merged.op.name == "Merge/MergeSummary"
    with tf.Session() as sess:
        tags = [tag for tag, _ in decode_summary(sess.run(merged))]
        assert tags == ["loss", "loss_1", "train/train/x", "w"]
        assert decode_summary(sess.run(odd)) == [("a_b", 1.0)]
    assert tf.summary.merge_all(key="nothing") is None


def test_op_errors_are_tensorflows():
    tags = tf.placeholder(tf.string)
    values = tf.placeholder(tf.float32)
    scalar = tf.summary.scalar("s", values)
    pair = tf.raw_ops.ScalarSummary(tags=tags, values=values)
    hist = tf.summary.histogram("weights", values)
    dup = tf.summary.merge([scalar, scalar])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"tags and values not the same shape: \[2\] != \[3\]"):
            sess.run(pair, {tags: [b"a", b"b"], values: [1, 2, 3]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"tags and values not the same shape: \[\] != \[2\] \(tag 's'\)"):
            sess.run(scalar, {values: [1, 2]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Nan in summary histogram for: weights"):
            sess.run(hist, {values: [1.0, float("nan")]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Infinity in summary histogram for: weights"):
            sess.run(hist, {values: [float("inf")]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Duplicate tag s found in summary inputs"):
            sess.run(dup, {values: 1.0})


def test_writer_errors(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path))
    with pytest.raises(tf.errors.InvalidArgumentError, match="is not a serialized Summary"):
        writer.add_summary(b"\xff\xff\xff", 3)
    with pytest.raises(TypeError, match="serialized Summary"):
        writer.add_summary(12, 3)
    writer.close()
    writer.add_summary(b"", 4)  # dropped after close, as TF's FileWriter does
    assert [e["step"] for e in read_events(str(tmp_path))] == [0]
    (tmp_path / "file").write_text("x")
    with pytest.raises(tf.errors.OpError, match=re.escape(str(tmp_path / "file" / "sub"))):
        tf.summary.FileWriter(str(tmp_path / "file" / "sub"))


def test_reopen_and_two_writers_in_one_directory(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path), max_queue=100)
    other = tf.summary.FileWriter(str(tmp_path))  # same second: a name of its own
    assert writer.get_logdir() == str(tmp_path)
    writer.add_summary(tf.Session().run(tf.summary.scalar("a", 1.0)), 1)
    assert len(read_records(event_files(str(tmp_path))[0])) + \
        len(read_records(event_files(str(tmp_path))[1])) == 2  # one pending, in memory
    writer.flush()
    writer.close()
    writer.reopen()
    writer.add_summary(tf.Session().run(tf.summary.scalar("b", 2.0)), 2)
    writer.close()
    other.close()
    files = event_files(str(tmp_path))
    assert len(files) == 3
    values = {}
    for f in files:
        for event in map(decode_event, read_records(f)):
            assert "file_version" in event or "summary" in event
            values.update({tag: (event["step"], v) for tag, v in event.get("summary", [])})
    assert values == {"a": (1, 1.0), "b": (2, 2.0)}


def test_a_corrupted_record_is_a_clear_error(tmp_path):
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_summary(tf.Session().run(tf.summary.scalar("loss", 1.5)), 1)
    path = event_files(str(tmp_path))[0]
    records = read_records(path)
    assert len(records) == 2
    blob = bytearray(open(path, "rb").read())
    second = 12 + len(records[0]) + 4
    blob[second + 12 + 3] ^= 0x20  # a byte of the second record's data
    open(path, "wb").write(bytes(blob))
    with pytest.raises(CorruptRecord, match=r"bad data CRC at offset %d" % second):
        read_records(path)
    blob = bytearray(open(path, "rb").read())
    open(path, "wb").write(bytes(blob[:-3]))
    with pytest.raises(CorruptRecord, match="truncated record"):
        read_records(path)


# ---- training ----

def _toy_model():
    """x moves towards 1 by gradient descent at 0.25: the loss (x - 1)^2 of the n-th step
    (from 0) is 0.25^n."""
    step = tf.train.get_or_create_global_step()
    x = tf.Variable(0.0, name="x")
    loss = tf.square(x - 1.0)
    train = tf.train.GradientDescentOptimizer(0.25).minimize(loss, global_step=step)
    tf.summary.scalar("loss", loss)
    return train


def test_monitored_training_session_writes_summaries(tmp_path):
    train = _toy_model()
    hooks = [tf.train.StopAtStepHook(last_step=6)]
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=hooks,
                                           save_summaries_steps=2,
                                           log_step_count_steps=2) as sess:
        for _ in range(20):
            if sess.should_stop():
                break
            sess.run(train)
    tf.summary.FileWriterCache.clear()  # closes the shared writer
    events = read_events(str(tmp_path))
    assert [e["step"] for e in events if e.get("session_log") == 1] == [1]  # START
    assert scalars(events, "loss") == pytest.approx({1: 1.0, 3: 0.0625, 5: 0.00390625})
    rates = scalars(events, "global_step/sec")
    assert rates and all(v > 0 for v in rates.values())


def test_summary_dir_and_secs_and_hook_arguments(tmp_path):
    train = _toy_model()
    summary_dir = tmp_path / "summaries"
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path / "ckpt"),
                                           summary_dir=str(summary_dir),
                                           save_summaries_secs=3600,
                                           hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
        while not sess.should_stop():
            sess.run(train)
    tf.summary.FileWriterCache.clear()
    assert not [f for f in os.listdir(tmp_path / "ckpt") if "tfevents" in f]
    # By time: only the first step is due within the hour.
    assert scalars(read_events(str(summary_dir)), "loss") == {1: 1.0}

    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        tf.train.SummarySaverHook(save_steps=1, output_dir=str(tmp_path))
    with pytest.raises(ValueError, match="Can not provide both every_secs and every_steps"):
        tf.train.SummarySaverHook(save_steps=1, save_secs=1, summary_op=tf.constant(b""))


# ---- the trainers write their curves into the checkpoint directory ----

def _trainer_curves(logdir):
    events = read_events(str(logdir))
    return {tag: scalars(events, tag)
            for tag in ("loss", "accuracy", "global_step/sec", "test_accuracy")}


def _every_100_steps(steps):
    """Summaries of the first step, then about every 100: the global step a hook fetches
    with a training step may be read before or after that step's update (as in TF)."""
    steps = sorted(steps)
    assert steps[0] == 1, steps
    assert all(99 <= b - a <= 101 for a, b in zip(steps, steps[1:])), steps
    return steps


def test_mnist_ps_writes_loss_accuracy_and_step_rate(tmp_path, fashion_mnist):
    """The C++ trainer, as one worker in this machine: 300 steps, summaries every 100."""
    program = BUILD / "examples" / "mnist_ps"
    if not program.exists():
        pytest.skip("mnist_ps is not built (%s)" % program)
    ckpt = tmp_path / "ckpt"
    out = subprocess.run([str(program), "--max_steps=300", "--log_every=100", "--seed=1",
                          "--checkpoint_dir=%s" % ckpt], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    curves = _trainer_curves(ckpt)
    steps = _every_100_steps(curves["loss"])
    assert len(steps) == 3 and sorted(curves["accuracy"]) == steps
    assert curves["loss"][steps[-1]] < curves["loss"][1]
    assert all(0 <= a <= 1 for a in curves["accuracy"].values())
    # As TF's StepCounterHook: every 100 global steps after the first, which starts the
    # clock (global step 1), so at 101 and 201 of 300.
    assert sorted(curves["global_step/sec"]) == [101, 201]
    assert min(curves["global_step/sec"].values()) > 0
    (final,) = curves["test_accuracy"].values()
    printed = [l for l in out.stdout.splitlines() if l.startswith("test accuracy:")]
    assert printed and abs(float(printed[0].split()[-1]) - final) < 1e-4


def test_python_trainer_writes_loss_accuracy_and_step_rate(tw_tool, tmp_path, fashion_mnist):
    """The seeds' Python trainer under tw launch (1 ps, 1 worker): only the chief writes."""
    ckpt = tmp_path / "ckpt"
    env = python_env()  # no allowed directories: the chief writes the checkpoints
    out = subprocess.run(
        [tw_tool, "launch", "--cluster", "ps=1,worker=1", "--", sys.executable,
         str(ROOT / "examples" / "python" / "trainer.py"), "--checkpoint_dir=%s" % ckpt,
         "--max_steps=250", "--log_every=100"],
        env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    curves = _trainer_curves(ckpt)
    steps = _every_100_steps(curves["loss"])
    assert len(steps) == 3 and sorted(curves["accuracy"]) == steps
    assert curves["loss"][steps[-1]] < curves["loss"][1]
    # The first trigger starts the clock; then at about steps 101 and 201.
    assert len(curves["global_step/sec"]) == 2 and min(curves["global_step/sec"].values()) > 0


# ---- Supervisor's summaries ----

def test_supervisor_writes_its_summary_op_the_step_rate_and_computed_summaries(tmp_path):
    """The chief's Supervisor writes logdir's event file: the graph, the merged summaries
    every save_summaries_secs at the global step, "global_step/sec", and what the program
    hands to summary_computed."""
    step = tf.train.get_or_create_global_step()
    v = tf.Variable(1.0, name="v")
    tf.summary.scalar("v_value", v)
    train = tf.group(tf.assign_add(v, 1.0), tf.assign_add(step, 1))
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_summaries_secs=0.05,
                             save_model_secs=0)
    assert sv.summary_op is not None and sv.summary_writer is not None
    with sv.managed_session() as sess:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            sess.run(train)
            time.sleep(0.01)
            if len(scalars(_flushed(sv, tmp_path), "global_step/sec")) >= 1:
                break
        sv.summary_computed(sess, tf.Summary(value=[tf.Summary.Value(tag="by_hand",
                                                                     simple_value=7.0)]))
        final = int(sess.run(step))
    sv.stop()
    events = read_events(str(tmp_path))
    assert any("graph_def" in e for e in events)
    # v and the step move together; a summary read while a train step runs may see them
    # one apart.
    values = scalars(events, "v_value")
    assert values and all(abs(value - (s + 1.0)) <= 1.0 for s, value in values.items())
    assert scalars(events, "global_step/sec")
    assert scalars(events, "by_hand") == {final: 7.0}


def test_summary_computed_without_a_writer_is_an_error():
    tf.Variable(1.0)
    sv = tf.train.Supervisor(logdir=None)
    with pytest.raises(RuntimeError, match="requires a summary writer"):
        sv.summary_computed(None, b"")


def _flushed(sv, logdir):
    sv.summary_writer.flush()
    return read_events(str(logdir))
