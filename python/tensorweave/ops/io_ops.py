"""TF 1.x's queue-based readers (tf.TFRecordReader, TextLineReader, FixedLengthRecordReader,
WholeFileReader) and tf.read_file / write_file, over the C++ reader ops
(src/ops/reader_ops.cc): a read takes file names from a string queue as files end, waits for
them without holding a thread, and raises OutOfRangeError once the queue is closed and
empty."""

from tensorweave import raw_ops
from tensorweave.framework import dtypes
from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.lib.io import tf_record


def _queue_ref(queue):
    return queue if isinstance(queue, ops.Tensor) else queue.queue_ref


class ReaderBase:
    def __init__(self, reader_ref, supports_serialize=False):
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    reader_ref = property(lambda self: self._reader_ref)
    supports_serialize = property(lambda self: self._supports_serialize)

    def read(self, queue, name=None):
        """The next (key, value) record, as scalar strings."""
        key, value = raw_ops.ReaderReadV2(reader_handle=self._reader_ref,
                                          queue_handle=_queue_ref(queue),
                                          name=name or "ReaderReadV2")
        return key, value

    def read_up_to(self, queue, num_records, name=None):
        """Between 1 and num_records records of one file, as string vectors."""
        keys, values = raw_ops.ReaderReadUpToV2(reader_handle=self._reader_ref,
                                                queue_handle=_queue_ref(queue),
                                                num_records=convert_to_tensor(
                                                    num_records, dtype=dtypes.int64),
                                                name=name or "ReaderReadUpToV2")
        return keys, values

    def num_records_produced(self, name=None):
        return raw_ops.ReaderNumRecordsProducedV2(reader_handle=self._reader_ref, name=name)

    def num_work_units_completed(self, name=None):
        return raw_ops.ReaderNumWorkUnitsCompletedV2(reader_handle=self._reader_ref, name=name)

    def reset(self, name=None):
        return raw_ops.ReaderResetV2(reader_handle=self._reader_ref, name=name)

    def serialize_state(self, name=None):
        raise NotImplementedError("%s does not serialize its state (nor does TensorFlow's)"
                                  % type(self).__name__)

    def restore_state(self, state, name=None):
        raise NotImplementedError("%s does not restore its state (nor does TensorFlow's)"
                                  % type(self).__name__)


class TFRecordReader(ReaderBase):
    def __init__(self, name=None, options=None):
        compression = tf_record.TFRecordOptions.get_compression_type_string(options)
        super().__init__(raw_ops.TFRecordReaderV2(compression_type=compression,
                                                  name=name or "TFRecordReaderV2"))


class TextLineReader(ReaderBase):
    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(raw_ops.TextLineReaderV2(skip_header_lines=skip_header_lines or 0,
                                                  name=name or "TextLineReaderV2"))


class FixedLengthRecordReader(ReaderBase):
    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        super().__init__(raw_ops.FixedLengthRecordReaderV2(
            record_bytes=record_bytes, header_bytes=header_bytes or 0,
            footer_bytes=footer_bytes or 0, hop_bytes=hop_bytes or 0,
            encoding=encoding or "", name=name or "FixedLengthRecordReaderV2"))


class WholeFileReader(ReaderBase):
    def __init__(self, name=None):
        super().__init__(raw_ops.WholeFileReaderV2(name=name or "WholeFileReaderV2"))


def read_file(filename, name=None):
    return raw_ops.ReadFile(filename=filename, name=name)


def write_file(filename, contents, name=None):
    return raw_ops.WriteFile(filename=filename, contents=contents, name=name)
