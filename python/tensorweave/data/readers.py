"""tf.data's file datasets as TF 1.x's: TFRecordDataset, TextLineDataset and
FixedLengthRecordDataset, each reading its files in order (plain, ZLIB or GZIP) in C++."""

from tensorweave.data import dataset_ops
from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.lib.io import tf_record


def _filenames(filenames):
    t = convert_to_tensor(filenames, dtype=dtypes.string, name="filenames")
    if t.shape.ndims not in (None, 0, 1):
        raise TypeError("`filenames` must be a `tf.Tensor` of `tf.string` elements, of rank "
                        "0 or 1.")
    return t


def _compression(compression_type):
    if compression_type is None:
        return ""
    if isinstance(compression_type, bytes):
        compression_type = compression_type.decode()
    return tf_record.TFRecordOptions.get_compression_type_string(compression_type)


class TFRecordDataset(dataset_ops.Dataset):
    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        super().__init__("TFRecord", inputs=[_filenames(filenames)],
                         attrs={"compression_type": _compression(compression_type),
                                "buffer_size": int(buffer_size or 0)},
                         types=dtypes.string, shapes=tensor_shape.TensorShape([]))


class TextLineDataset(dataset_ops.Dataset):
    def __init__(self, filenames, compression_type=None, buffer_size=None):
        super().__init__("TextLine", inputs=[_filenames(filenames)],
                         attrs={"compression_type": _compression(compression_type)},
                         types=dtypes.string, shapes=tensor_shape.TensorShape([]))


class FixedLengthRecordDataset(dataset_ops.Dataset):
    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None,
                 buffer_size=None, compression_type=None):
        super().__init__("FixedLengthRecord", inputs=[_filenames(filenames)],
                         attrs={"record_bytes": int(record_bytes),
                                "header_bytes": int(header_bytes or 0),
                                "footer_bytes": int(footer_bytes or 0),
                                "compression_type": _compression(compression_type)},
                         types=dtypes.string, shapes=tensor_shape.TensorShape([]))
