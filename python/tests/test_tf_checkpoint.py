"""TensorFlow's own checkpoints (V2 tensor bundles) read by tensorweave. The checkpoint is
written here by an independent writer made from the published formats alone: LevelDB's
table format for <prefix>.index (blocks, restart points, block trailers with masked
CRC32C, the index block and the 48-byte footer) and the field numbers of TensorFlow's
tensor_bundle.proto for its entries; tensor bytes as TensorFlow lays them out."""

import struct

import numpy as np
import pytest

import tensorweave.compat.v1 as tf
from tfrecord_format import crc32c  # CRC32C from its published definition
from tfrecord_format import mask as masked

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


@pytest.fixture
def tf_checkpoint(tmp_path):
    prefix = str(tmp_path / "model.ckpt-7")
    names, names_crc = string_tensor_bytes(NAMES)
    write_tf_checkpoint(prefix, {
        "dense/kernel": (DT_FLOAT, [2, 3], W.tobytes(), None),
        "global_step": (DT_INT64, [], struct.pack("<q", 7), None),
        "vocabulary": (DT_STRING, [3], names, names_crc),
    })
    return prefix


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


def test_a_partitioned_tensorflow_variable_says_it_is_not_built_yet(tmp_path):
    prefix = str(tmp_path / "parted")
    # The full variable's entry lists its slices (field 7); its parts are under other keys.
    slice_proto = field_bytes(1, field_varint(1, 0) + field_varint(2, 2))
    entry = entry_proto(DT_FLOAT, [2], 0, 0, 0) + field_bytes(7, slice_proto)
    with open(prefix + ".data-00000-of-00001", "wb"):
        pass
    with open(prefix + ".index", "wb") as f:
        f.write(table([(b"", header_proto(1)), (b"emb", entry)]))
    assert tf.train.list_variables(prefix) == [("emb", [2])]
    with pytest.raises(tf.errors.UnimplementedError, match="partitioned"):
        tf.train.load_variable(prefix, "emb")
