"""TFRecord files and tf.train.Example against independent implementations written here
from the published formats: the record framing with masked CRC32C (Python's struct and a
CRC32C of our own), zlib and gzip streams (Python's zlib and gzip), and the Example wire
format; then parsing: parse_example, parse_single_example, decode_raw, decode_csv."""

import gzip
import struct
import zlib

import numpy as np
import pytest

import tensorweave.compat.v1 as tf
from tfrecord_format import masked_crc


def frame(data):
    length = struct.pack("<Q", len(data))
    return (length + struct.pack("<I", masked_crc(length)) + data +
            struct.pack("<I", masked_crc(data)))


def unframe(blob):
    records, at = [], 0
    while at < len(blob):
        (length,) = struct.unpack_from("<Q", blob, at)
        (length_crc,) = struct.unpack_from("<I", blob, at + 8)
        assert length_crc == masked_crc(blob[at:at + 8])
        data = blob[at + 12:at + 12 + length]
        (data_crc,) = struct.unpack_from("<I", blob, at + 12 + length)
        assert data_crc == masked_crc(data)
        records.append(data)
        at += 16 + length
    return records


RECORDS = [b"first", b"", bytes(range(256)) * 40, "text".encode()]


@pytest.mark.parametrize("compression", ["", "ZLIB", "GZIP"])
def test_writer_output_reads_with_an_independent_reader(tmp_path, compression):
    path = str(tmp_path / "out.tfrecord")
    options = tf.python_io.TFRecordOptions(compression or None)
    with tf.python_io.TFRecordWriter(path, options) as writer:
        for r in RECORDS:
            writer.write(r)
    blob = open(path, "rb").read()
    if compression == "ZLIB":
        blob = zlib.decompress(blob)
    elif compression == "GZIP":
        blob = gzip.decompress(blob)
    assert unframe(blob) == RECORDS


@pytest.mark.parametrize("compression", ["", "ZLIB", "GZIP"])
def test_iterator_reads_files_written_independently(tmp_path, compression):
    blob = b"".join(frame(r) for r in RECORDS)
    if compression == "ZLIB":
        blob = zlib.compress(blob)
    elif compression == "GZIP":
        blob = gzip.compress(blob)
    path = tmp_path / "in.tfrecord"
    path.write_bytes(blob)
    kind = {"": tf.python_io.TFRecordCompressionType.NONE,
            "ZLIB": tf.python_io.TFRecordCompressionType.ZLIB,
            "GZIP": tf.python_io.TFRecordCompressionType.GZIP}[compression]
    got = list(tf.python_io.tf_record_iterator(str(path), tf.python_io.TFRecordOptions(kind)))
    assert got == RECORDS


def test_iterator_names_a_corrupt_file(tmp_path):
    path = tmp_path / "bad.tfrecord"
    blob = bytearray(frame(b"one") + frame(b"two"))
    blob[len(frame(b"one")) + 13] ^= 1
    path.write_bytes(bytes(blob))
    it = tf.io.tf_record_iterator(str(path))
    assert next(it) == b"one"
    with pytest.raises(tf.errors.DataLossError, match="data CRC mismatch"):
        next(it)


# ---- tf.train.Example ----

def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def test_example_bytes_are_tensorflows_wire_format():
    example = tf.train.Example(features=tf.train.Features(feature={
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[7]))}))
    # Example.features = 1; Features.feature = 1 (map entry: key 1, value 2);
    # Feature.int64_list = 3; Int64List.value = 1, packed.
    entry = field(1, b"label") + field(2, field(3, field(1, varint(7))))
    assert example.SerializeToString() == field(1, field(1, entry))


def _example(label, pixels, tags):
    return tf.train.Example(features=tf.train.Features(feature={
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
        "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[bytes(pixels)])),
        "weight": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5 * label])),
        "tags": tf.train.Feature(bytes_list=tf.train.BytesList(value=tags)),
    })).SerializeToString()


FEATURES = {
    "label": tf.FixedLenFeature([], tf.int64),
    "image": tf.FixedLenFeature([], tf.string),
    "weight": tf.FixedLenFeature([1], tf.float32),
    "missing": tf.FixedLenFeature([2], tf.float32, default_value=[-1.0, -2.0]),
    "tags": tf.VarLenFeature(tf.string),
}


def test_parse_example_and_decode_raw():
    records = [_example(3, [1, 2, 3, 4], [b"a"]), _example(5, [5, 6, 7, 8], [b"b", b"c"])]
    parsed = tf.parse_example(tf.constant(records), FEATURES)
    pixels = tf.decode_raw(parsed["image"], tf.uint8)
    assert parsed["weight"].shape.as_list() == [2, 1]
    dense_tags = tf.sparse_tensor_to_dense(parsed["tags"])
    with tf.Session() as sess:
        label, px, weight, missing, tags, dense = sess.run(
            [parsed["label"], pixels, parsed["weight"], parsed["missing"], parsed["tags"],
             dense_tags])
    np.testing.assert_array_equal(label, [3, 5])
    np.testing.assert_array_equal(px, [[1, 2, 3, 4], [5, 6, 7, 8]])
    np.testing.assert_allclose(weight, [[1.5], [2.5]])
    np.testing.assert_allclose(missing, [[-1, -2], [-1, -2]])
    assert isinstance(tags, tf.SparseTensorValue)
    np.testing.assert_array_equal(tags.indices, [[0, 0], [1, 0], [1, 1]])
    assert list(tags.values) == [b"a", b"b", b"c"]
    np.testing.assert_array_equal(tags.dense_shape, [2, 2])
    assert dense.tolist() == [[b"a", b""], [b"b", b"c"]]


def test_parse_single_example_drops_the_batch_dimension():
    record = tf.placeholder(tf.string, [])
    parsed = tf.parse_single_example(record, FEATURES)
    assert parsed["label"].shape.as_list() == []
    assert parsed["missing"].shape.as_list() == [2]
    with tf.Session() as sess:
        out = sess.run(parsed, {record: _example(9, [0], [b"x", b"y"])})
    assert out["label"] == 9
    np.testing.assert_array_equal(out["tags"].indices, [[0], [1]])
    np.testing.assert_array_equal(out["tags"].dense_shape, [2])


def test_parse_errors_name_the_feature():
    parsed = tf.parse_single_example(tf.constant(_example(1, [0], [])),
                                     {"nope": tf.FixedLenFeature([], tf.int64)})
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Feature: nope is required but could not be found"):
            sess.run(parsed)
    with pytest.raises(ValueError, match="allow_missing"):
        tf.parse_example(tf.constant([b""]),
                         {"s": tf.FixedLenSequenceFeature([], tf.int64)})


def test_decode_csv_and_string_to_number():
    lines = tf.constant(["1,shirt,2.5", "2,,0.25"])
    ids, names, sizes = tf.decode_csv(lines, [[0], ["?"], [0.0]])
    number = tf.string_to_number(tf.constant(["7", "-1.5"]))
    with tf.Session() as sess:
        got = sess.run([ids, names, sizes, number])
    assert got[0].tolist() == [1, 2]
    assert got[1].tolist() == [b"shirt", b"?"]
    np.testing.assert_allclose(got[2], [2.5, 0.25])
    np.testing.assert_allclose(got[3], [7, -1.5])
