"""TensorFlow's own checkpoints (V2 tensor bundles) read by tensorweave. The checkpoint is
written here by an independent writer made from the published formats alone: LevelDB's
table format for <prefix>.index (blocks, restart points, block trailers with masked
CRC32C, the index block and the 48-byte footer) and the field numbers of TensorFlow's
tensor_bundle.proto for its entries; tensor bytes as TensorFlow lays them out."""

import os
import struct

import numpy as np
import pytest

import tensorweave.compat.v1 as tf
from tfrecord_format import crc32c  # CRC32C from its published definition
from tfrecord_format import mask as masked
from tf_file_readers import proto_fields, read_table  # independent readers

# ---- protobuf wire format, by hand ----

def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field_varint(number, value):
    return varint(number << 3) + varint(value) if value else b""


def field_bytes(number, value):
    return varint((number << 3) | 2) + varint(len(value)) + value


def header_proto(num_shards):
    version = field_varint(1, 1)  # VersionDef.producer = 1 (min_consumer 0)
    return field_varint(1, num_shards) + field_bytes(3, version)


def entry_proto(dtype, shape, offset, size, crc, shard=0):
    dims = b"".join(field_bytes(2, field_varint(1, d)) for d in shape)  # TensorShapeProto.dim
    return (field_varint(1, dtype) + field_bytes(2, dims) + field_varint(3, shard) +
            field_varint(4, offset) + field_varint(5, size) +
            varint((6 << 3) | 5) + struct.pack("<I", masked(crc)))


# ---- LevelDB's table format, by hand: one data block, every entry a restart point ----

def block(entries):
    body, restarts = bytearray(), []
    for key, value in entries:
        restarts.append(len(body))
        body += varint(0) + varint(len(key)) + varint(len(value)) + key + value
    if not restarts:
        restarts = [0]
    for r in restarts:
        body += struct.pack("<I", r)
    return bytes(body + struct.pack("<I", len(restarts)))


def with_trailer(contents, kind=b"\x00"):  # 0: no compression
    return contents + kind + struct.pack("<I", masked(crc32c(contents + kind)))


def handle(offset, size):
    return varint(offset) + varint(size)


def table(entries, data_kind=b"\x00", data_size=None, index_size=None):
    """The table of `entries`, in one data block. The keywords make it lie, with every
    checksum still right: the data block's compression type, or the sizes that the index
    block and the footer state."""
    entries = sorted(entries)
    out = bytearray()
    data = block(entries)
    data_handle = handle(len(out), len(data) if data_size is None else data_size)
    out += with_trailer(data, data_kind)
    meta = block([])
    meta_handle = handle(len(out), len(meta))
    out += with_trailer(meta)
    index = block([(entries[-1][0], data_handle)])
    index_handle = handle(len(out), len(index) if index_size is None else index_size)
    out += with_trailer(index)
    footer = meta_handle + index_handle
    footer += b"\x00" * (40 - len(footer))
    return bytes(out + footer + struct.pack("<Q", 0xDB4775248B80FB57))


# ---- a checkpoint as TensorFlow writes one ----

DT_FLOAT, DT_STRING, DT_INT64 = 1, 7, 9


def string_tensor_bytes(values):
    """[varint64 lengths][masked crc of the lengths as uint32][bytes], and the CRC
    TensorFlow stores for the whole."""
    lengths = b"".join(varint(len(v)) for v in values)
    crc = crc32c(b"".join(struct.pack("<I", len(v)) for v in values))
    checksum = struct.pack("<I", masked(crc))
    crc = crc32c(checksum, crc)
    for v in values:
        crc = crc32c(v, crc)
    return lengths + checksum + b"".join(values), crc


def write_tf_checkpoint(prefix, tensors):
    """tensors: name -> (dtype enum, shape, bytes, crc or None)."""
    data, entries = bytearray(), [(b"", header_proto(1))]
    for name, (dtype, shape, raw, crc) in tensors.items():
        crc = crc32c(raw) if crc is None else crc
        entries.append((name.encode(), entry_proto(dtype, shape, len(data), len(raw), crc)))
        data += raw
    with open(prefix + ".data-00000-of-00001", "wb") as f:
        f.write(data)
    with open(prefix + ".index", "wb") as f:
        f.write(table(entries))


W = np.arange(6, dtype=np.float32).reshape(2, 3) / 4.0
NAMES = [b"alpha", b"", b"gamma delta"]


def write_model_checkpoint(prefix):
    names, names_crc = string_tensor_bytes(NAMES)
    write_tf_checkpoint(prefix, {
        "dense/kernel": (DT_FLOAT, [2, 3], W.tobytes(), None),
        "global_step": (DT_INT64, [], struct.pack("<q", 7), None),
        "vocabulary": (DT_STRING, [3], names, names_crc),
    })


@pytest.fixture
def tf_checkpoint(tmp_path):
    prefix = str(tmp_path / "model.ckpt-7")
    write_model_checkpoint(prefix)
    return prefix


# The same checkpoint, checked in (python/tests/data/tf_checkpoint): its bytes are what the
# writer above makes from the published formats, so a change to either shows here.
CHECKED_IN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                          "tf_checkpoint", "model.ckpt-7")


def test_the_checked_in_checkpoint_is_the_specifications_and_reads(tmp_path):
    prefix = str(tmp_path / "model.ckpt-7")
    write_model_checkpoint(prefix)
    for suffix in (".index", ".data-00000-of-00001"):
        with open(prefix + suffix, "rb") as made, open(CHECKED_IN + suffix, "rb") as kept:
            assert made.read() == kept.read(), suffix
    np.testing.assert_array_equal(tf.train.load_variable(CHECKED_IN, "dense/kernel"), W)
    assert list(tf.train.load_variable(CHECKED_IN, "vocabulary")) == NAMES


def test_a_tensorflow_checkpoint_is_listed_and_read(tf_checkpoint):
    assert tf.train.list_variables(tf_checkpoint) == [
        ("dense/kernel", [2, 3]), ("global_step", []), ("vocabulary", [3])]
    np.testing.assert_array_equal(tf.train.load_variable(tf_checkpoint, "dense/kernel"), W)
    assert tf.train.load_variable(tf_checkpoint, "global_step") == 7
    assert list(tf.train.load_variable(tf_checkpoint, "vocabulary")) == NAMES
    reader = tf.train.NewCheckpointReader(tf_checkpoint)
    assert reader.has_tensor("dense/kernel") and not reader.has_tensor("nope")


def test_saver_restores_a_tensorflow_checkpoint(tf_checkpoint):
    kernel = tf.get_variable("dense/kernel", [2, 3])
    step = tf.Variable(0, dtype=tf.int64, name="global_step")
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, tf_checkpoint)
        np.testing.assert_array_equal(sess.run(kernel), W)
        assert sess.run(step) == 7


def test_a_corrupted_tensorflow_checkpoint_is_data_loss(tf_checkpoint):
    with open(tf_checkpoint + ".data-00000-of-00001", "r+b") as f:
        f.seek(3)
        f.write(b"\xff")
    with pytest.raises(tf.errors.DataLossError, match="checksum mismatch.*dense/kernel"):
        tf.train.load_variable(tf_checkpoint, "dense/kernel")
    index = tf_checkpoint + ".index"
    with open(index, "r+b") as f:
        f.seek(10)
        f.write(b"\x00\x00\x00")
    with pytest.raises(tf.errors.DataLossError, match="TensorFlow checkpoint index"):
        tf.train.list_variables(tf_checkpoint)


@pytest.mark.parametrize("lie, error", [
    ({"data_size": 1 << 40}, r"data block 0 \(offset 0, 1099511627776 bytes\) does not fit"),
    ({"index_size": 1 << 40}, r"the index block .* does not fit"),
    ({"data_kind": b"\x01"}, r"data block 0 .*compression type 1 but is not valid Snappy"),
    ({"data_kind": b"\x07"}, r"data block 0 .*compression type 7, neither none"),
])
def test_an_index_whose_block_handles_lie_is_data_loss(tmp_path, lie, error):
    # LevelDB would allocate what a handle or a Snappy header claims before reading it:
    # the handles are checked against the file first, so a terabyte claim is an error.
    prefix = str(tmp_path / "lying")
    with open(prefix + ".data-00000-of-00001", "wb"):
        pass
    with open(prefix + ".index", "wb") as f:
        f.write(table([(b"", header_proto(1))], **lie))
    with pytest.raises(tf.errors.DataLossError, match="TensorFlow checkpoint index .*" + error):
        tf.train.list_variables(prefix)


def slice_key(name, extents):
    """EncodeTensorNameSlice: OrderedCode's 0, the escaped name and its terminator, the
    rank, then each dimension's start and length (-1: whole)."""
    key = b"\x00" + name + b"\x00\x01" + bytes([1, len(extents)])
    for start, length in extents:
        key += signed_ordered(start) + signed_ordered(length)
    return key


def extent_proto(start=None, length=None):
    return (field_varint(1, start or 0) if start is not None else b"") + (
        field_varint(2, length) if length is not None else b"")


def write_partitioned(prefix, name, shape, parts):
    """parts: [(extents for the key, extent protos, values)] of one variable, as TF's
    BundleWriter::AddSlice writes them: the full entry lists the slices, each slice is an
    entry of its own."""
    data, entries, slices = bytearray(), [(b"", header_proto(1))], b""
    for extents, protos, values in parts:
        raw = values.tobytes()
        entries.append((slice_key(name, extents),
                        entry_proto(DT_FLOAT, list(values.shape), len(data), len(raw),
                                    crc32c(raw))))
        slices += field_bytes(7, b"".join(field_bytes(1, p) for p in protos))
        data += raw
    entries.append((name, entry_proto(DT_FLOAT, shape, 0, 0, 0) + slices))
    with open(prefix + ".data-00000-of-00001", "wb") as f:
        f.write(data)
    with open(prefix + ".index", "wb") as f:
        f.write(table(entries))


def test_a_partitioned_tensorflow_variable_is_read_from_its_row_slices(tmp_path):
    prefix = str(tmp_path / "parted")
    full = np.arange(15, dtype=np.float32).reshape(5, 3)
    write_partitioned(prefix, b"emb", [5, 3], [
        ([(0, 2), (0, -1)], [extent_proto(0, 2), b""], full[:2]),
        ([(2, 3), (0, -1)], [extent_proto(2, 3), b""], full[2:]),
    ])
    assert tf.train.list_variables(prefix) == [("emb", [5, 3])]
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "emb"), full)
    with tf.Graph().as_default():  # restored onto a partitioning of its own (3 parts)
        emb = tf.get_variable("emb", [5, 3], partitioner=tf.fixed_size_partitioner(3))
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(tf.concat(list(emb), 0)), full)


def test_a_variable_partitioned_by_columns_is_listed_and_refused(tmp_path):
    prefix = str(tmp_path / "columns")
    full = np.arange(6, dtype=np.float32).reshape(2, 3)
    write_partitioned(prefix, b"w", [2, 3], [
        ([(0, -1), (0, 1)], [b"", extent_proto(0, 1)], full[:, :1]),
        ([(0, -1), (1, 2)], [b"", extent_proto(1, 2)], full[:, 1:]),
    ])
    assert tf.train.list_variables(prefix) == [("w", [2, 3])]
    with pytest.raises(tf.errors.UnimplementedError, match="partitioned along a dimension"):
        tf.train.load_variable(prefix, "w")


def test_a_listed_slice_without_its_entry_is_data_loss(tmp_path):
    prefix = str(tmp_path / "missing")
    slice_proto = field_bytes(1, extent_proto(0, 2))
    entry = entry_proto(DT_FLOAT, [2], 0, 0, 0) + field_bytes(7, slice_proto)
    with open(prefix + ".data-00000-of-00001", "wb"):
        pass
    with open(prefix + ".index", "wb") as f:
        f.write(table([(b"", header_proto(1)), (b"emb", entry)]))
    with pytest.raises(tf.errors.DataLossError, match="emb.*lists a slice of rows 0\\+2"):
        tf.train.list_variables(prefix)


# ---- checkpoints tensorweave writes, read back by an independent reader ----

def signed_ordered(n):
    """OrderedCode's SignedNumIncreasing for the small numbers slice keys hold here."""
    assert -64 <= n < 64
    return bytes([(0x80 ^ n) & 0xFF])


def shape_of(entry):
    return [proto_fields(d).get(1, [0])[0] for d in proto_fields(entry[2][0]).get(2, [])]


def test_the_saver_writes_what_tensorflow_reads(tmp_path):
    w = tf.Variable(W, name="dense/kernel")
    words = tf.Variable(NAMES, name="vocabulary")
    emb = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(3),
                          initializer=tf.ones_initializer())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"), global_step=3)
    table = read_table(prefix + ".index")
    keys = [k for k, _ in table]
    assert keys == sorted(keys) and keys[0] == b""
    header = proto_fields(table[0][1])
    assert header.get(1) == [1] and proto_fields(header[3][0]).get(1) == [1]  # 1 shard, v1
    entries = {k: proto_fields(v) for k, v in table[1:]}
    data = open(prefix + ".data-00000-of-00001", "rb").read()

    def tensor_bytes(entry):
        offset, size = entry.get(4, [0])[0], entry.get(5, [0])[0]
        raw = data[offset:offset + size]
        assert entry[6] == [masked(crc32c(raw))] or entry[1] == [DT_STRING]
        return raw

    kernel = entries[b"dense/kernel"]
    assert kernel[1] == [DT_FLOAT] and shape_of(kernel) == [2, 3]
    assert tensor_bytes(kernel) == W.tobytes()
    vocab = entries[b"vocabulary"]
    raw, crc = string_tensor_bytes(NAMES)
    assert vocab[1] == [DT_STRING] and tensor_bytes(vocab) == raw and vocab[6] == [masked(crc)]
    # emb: a partitioned entry listing three row slices, each an entry under its slice key.
    full = entries[b"emb"]
    assert shape_of(full) == [10, 4] and 4 not in full and len(full[7]) == 3
    slice_keys = set()
    for start, count, slice_proto in zip([0, 4, 7], [4, 3, 3], full[7]):
        rows_extent, cols_extent = proto_fields(slice_proto)[1]
        assert proto_fields(rows_extent).get(1, [0]) == [start]
        assert proto_fields(rows_extent)[2] == [count] and cols_extent == b""
        key = slice_key(b"emb", [(start, count), (0, -1)])
        slice_keys.add(key)
        part = entries[key]
        assert shape_of(part) == [count, 4]
        assert tensor_bytes(part) == np.ones([count, 4], np.float32).tobytes()
    assert set(entries) == {b"dense/kernel", b"vocabulary", b"emb"} | slice_keys


def test_a_partitioned_checkpoint_restores_onto_another_partitioning(tmp_path):
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(3),
                              initializer=tf.random_uniform_initializer())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run(tf.concat(list(emb), 0))
            prefix = tf.train.Saver().save(sess, str(tmp_path / "parts"))
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "emb"), values)
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(2))
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(tf.concat(list(emb), 0)), values)


def test_write_version_v1_writes_tensorweaves_own_index(tmp_path):
    tf.Variable(W, name="w")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = tf.train.Saver(write_version=tf.train.SaverDef.V1).save(
            sess, str(tmp_path / "own"))
    assert open(prefix + ".index", "rb").read(8) == b"TWCKIDX1"
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "w"), W)
