"""TFRecord files from Python, as TF 1.x's tf.python_io / tf.io: TFRecordWriter,
tf_record_iterator, TFRecordOptions and TFRecordCompressionType. The framing, CRCs and
compression are the C++ library's (src/io), the same code the readers and datasets use."""

from tensorweave import _native


class TFRecordCompressionType:
    NONE = 0
    ZLIB = 1
    GZIP = 2


class TFRecordOptions:
    """How a TFRecord file is compressed: compression_type None/"", "ZLIB" or "GZIP" (or a
    TFRecordCompressionType)."""

    compression_type_map = {TFRecordCompressionType.ZLIB: "ZLIB",
                            TFRecordCompressionType.GZIP: "GZIP",
                            TFRecordCompressionType.NONE: ""}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        if isinstance(compression_type, TFRecordOptions):
            compression_type = compression_type.compression_type
        self.compression_type = compression_type

    @classmethod
    def get_compression_type_string(cls, options):
        if options is None:
            return ""
        if isinstance(options, TFRecordOptions):
            options = options.compression_type
        if options is None:
            return ""
        if options in cls.compression_type_map:
            return cls.compression_type_map[options]
        if options in ("", "ZLIB", "GZIP"):
            return options
        raise ValueError('Unsupported compression_type: %r; use "", "ZLIB" or "GZIP"' %
                         (options,))


def _as_bytes(record):
    if isinstance(record, str):
        return record.encode("utf-8")
    return bytes(record)


class TFRecordWriter:
    """Writes records to a TFRecord file at `path` (replacing any file there)."""

    def __init__(self, path, options=None):
        compression = TFRecordOptions.get_compression_type_string(options)
        self._writer = _native.RecordWriter(str(path), compression)

    def write(self, record):
        self._writer.write(_as_bytes(record))

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def tf_record_iterator(path, options=None):
    """Yields the records of the TFRecord file at `path`; a corrupt record raises
    DataLossError naming the file and the offset."""
    compression = TFRecordOptions.get_compression_type_string(options)
    reader = _native.RecordReader(str(path), compression)
    while True:
        record = reader.next()
        if record is None:
            return
        yield record

