"""Fashion-MNIST as Debian's dataset-fashion-mnist installs it, and shuffled batches of it.

    from tensorweave.datasets import fashion_mnist
    (train_images, train_labels), (test_images, test_labels) = fashion_mnist.load_data()
    for images, labels in fashion_mnist.batches(train_images, train_labels, 100, seed=7):
        ...   # images: float32 [100, 784] in [0, 1]; labels: int32 [100]; never ends

examples/fashion_mnist.h from Python, through the native module: the C++ reader reads and
checks the files, and `batches` hands out the examples in the order of the C++
`BatchIterator` (its ShardSampler) with the same seed, shard count and shard.

Errors, every message naming the file (the C++ messages): FileNotFoundError for a missing
file (saying which package installs it); ValueError for a file that is damaged (corrupt or
truncated gzip, fewer or more data bytes than the IDX header declares) or not what is
expected (not a regular file, bad magic, an element type other than unsigned byte, a wrong
rank, image and label counts that differ, a label outside 0..9); PermissionError when it
cannot be opened for lack of permission, MemoryError when it does not fit, OSError for
other failures to read. Sizes in a header are never trusted: nothing is allocated beyond
what the file can hold.
"""

import operator
import os

import numpy as np

from tensorweave import _native

__all__ = ["DEFAULT_DATA_DIR", "NUM_CLASSES", "CLASS_NAMES", "load_data", "load_split",
           "read_idx", "batches"]

# Where Debian's dataset-fashion-mnist package installs the files.
DEFAULT_DATA_DIR = _native.FASHION_MNIST_DEFAULT_DIR
NUM_CLASSES = _native.FASHION_MNIST_NUM_CLASSES
CLASS_NAMES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot")


def read_idx(path):
    """The IDX file at `path` (gzip-compressed or plain, told apart by the gzip magic bytes,
    not the name) as a writable uint8 numpy array of the dimensions its header gives.
    Only element type 0x08 (unsigned byte) is supported. Errors as in the module's doc."""
    return _native.read_idx(os.fspath(path))


def load_split(split, data_dir=None):
    """(images, labels) of split "train" (60,000 examples) or "t10k" (10,000) from
    `data_dir` (default DEFAULT_DATA_DIR): <split>-images-idx3-ubyte.gz and
    <split>-labels-idx1-ubyte.gz (or the same names without .gz when the .gz files are
    absent). images: uint8 [N, rows, cols] (28 x 28 for Fashion-MNIST); labels: uint8 [N],
    each in [0, 10). ValueError for another split; errors as in the module's doc."""
    data_dir = DEFAULT_DATA_DIR if data_dir is None else os.fspath(data_dir)
    return _native.load_fashion_mnist(data_dir, split)


def load_data(data_dir=None):
    """((train_images, train_labels), (test_images, test_labels)), as keras'
    fashion_mnist.load_data(): uint8 images [N, 28, 28] and uint8 labels [N] (N = 60,000
    and 10,000), writable numpy arrays in file order. Reads `data_dir` (default
    DEFAULT_DATA_DIR) and never downloads. Errors as in load_split."""
    return load_split("train", data_dir), load_split("t10k", data_dir)


def _as_index(value, what):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError("%s must be an integer, found %r" % (what, value)) from None


def batches(images, labels, batch_size, seed, num_shards=1, shard=0):
    """Full batches of shard `shard` of `num_shards` of (images, labels), shuffled anew every
    epoch, forever: a generator of (float32 [batch_size, example_size], int32 [batch_size]).

    `images` is [N, ...] (uint8 pixels are scaled by 1/255 to [0, 1], as the C++ batches
    are; other pixels are passed through as float32); `labels` is [N]. The examples come in
    the order of the C++ BatchIterator with the same seed, shard count and shard: shard i
    of n holds the examples whose index is i modulo n (disjoint shards covering the data);
    each epoch visits every example of the shard once, in an order that depends on (seed,
    shard, epoch) only; a batch that reaches the end of an epoch is completed from the next
    one (batch_size may exceed the shard). `seed` is any integer, taken modulo 2**64 as
    C++'s uint64 would take it.

    The arguments are checked at the call, not at the first batch: ValueError for images and
    labels of different lengths, batch_size < 1, num_shards < 1, shard outside
    [0, num_shards) or an empty shard; TypeError for non-integers. The arrays are read, not
    copied: changing them changes later batches."""
    images = np.asarray(images)
    labels = np.asarray(labels)
    batch_size = _as_index(batch_size, "batch_size")
    seed = _as_index(seed, "seed")
    num_shards = _as_index(num_shards, "num_shards")
    shard = _as_index(shard, "shard")
    if images.ndim < 1 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
        raise ValueError("batches: images [%s] and labels [%s] do not hold the same number "
                         "of examples" % (", ".join(map(str, images.shape)),
                                          ", ".join(map(str, labels.shape))))
    sampler = _native.ShardSampler(images.shape[0], num_shards, shard, seed)
    rows = sampler.next(batch_size)  # checks batch_size now
    return _batches(images.reshape(images.shape[0], -1), labels, sampler, batch_size, rows)


def _batches(images, labels, sampler, batch_size, rows):
    scale = np.uint8 == images.dtype
    while True:
        if scale:
            batch = _native.scale_pixel_rows(images, rows)
        else:
            batch = images[rows].astype(np.float32)
        yield batch, labels[rows].astype(np.int32)
        rows = sampler.next(batch_size)
