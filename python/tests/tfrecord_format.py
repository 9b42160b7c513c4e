"""The checksum of TFRecord framing, LevelDB tables and TensorFlow checkpoints, written from
its published definition for tests that read or write those files independently of
tensorweave's own code: CRC32C (Castagnoli, reflected polynomial 0x82F63B78) and the mask
they store it with."""


def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data, crc=0):
    """The CRC32C of `data`; with `crc`, of the data it was computed over followed by
    `data` (an extension)."""
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def mask(crc):
    """A CRC as TFRecord, LevelDB and TensorFlow's checkpoints store it: rotated right by
    15, plus 0xa282ead8."""
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def masked_crc(data):
    """What a record stores for `data`."""
    return mask(crc32c(data))
