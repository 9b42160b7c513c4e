"""Independent readers of TensorFlow's files, written from the published formats alone
for tests that check what tensorweave writes: protocol buffers by field number (the wire
format), and LevelDB's table format (footer, index block, blocks with restart points and
trailers whose masked CRC32C is checked) as a checkpoint's .index uses it."""

import struct

from tfrecord_format import crc32c
from tfrecord_format import mask as masked


def read_varint(buf, at):
    value, shift = 0, 0
    while True:
        byte = buf[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def proto_fields(buf):
    """field number -> [values]: ints for varints and fixed32, bytes for the rest."""
    fields, at = {}, 0
    while at < len(buf):
        tag, at = read_varint(buf, at)
        kind = tag & 7
        if kind == 0:
            value, at = read_varint(buf, at)
        elif kind == 2:
            n, at = read_varint(buf, at)
            value, at = bytes(buf[at:at + n]), at + n
        elif kind == 5:
            value, at = struct.unpack_from("<I", buf, at)[0], at + 4
        else:
            raise AssertionError("wire type %d" % kind)
        fields.setdefault(tag >> 3, []).append(value)
    return fields


def block_entries(contents):
    """A block's (key, value) pairs: prefix-shared keys, restart array at the end."""
    restarts = struct.unpack_from("<I", contents, len(contents) - 4)[0]
    end, at, key, out = len(contents) - 4 - 4 * restarts, 0, b"", []
    while at < end:
        shared, at = read_varint(contents, at)
        unshared, at = read_varint(contents, at)
        size, at = read_varint(contents, at)
        key = key[:shared] + contents[at:at + unshared]
        at += unshared
        out.append((key, contents[at:at + size]))
        at += size
    return out


def read_block(table_bytes, offset, size):
    contents, kind = table_bytes[offset:offset + size], table_bytes[offset + size:offset + size + 1]
    assert kind == b"\x00", "TensorFlow writes its index uncompressed"
    stored = struct.unpack_from("<I", table_bytes, offset + size + 1)[0]
    assert stored == masked(crc32c(contents + kind))
    return contents


def read_table(path):
    data = open(path, "rb").read()
    assert struct.unpack_from("<Q", data, len(data) - 8)[0] == 0xDB4775248B80FB57
    at = len(data) - 48
    _, at = read_varint(data, at)  # metaindex offset and size
    _, at = read_varint(data, at)
    index_offset, at = read_varint(data, at)
    index_size, at = read_varint(data, at)
    entries = []
    for _, handle_bytes in block_entries(read_block(data, index_offset, index_size)):
        offset, at = read_varint(handle_bytes, 0)
        size, _ = read_varint(handle_bytes, at)
        entries += block_entries(read_block(data, offset, size))
    return entries
