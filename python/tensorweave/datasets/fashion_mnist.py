"""Fashion-MNIST as Debian's dataset-fashion-mnist installs it, and shuffled batches of it.

    from tensorweave.datasets import fashion_mnist
    (train_images, train_labels), (test_images, test_labels) = fashion_mnist.load_data()
    for images, labels in fashion_mnist.batches(train_images, train_labels, 100, seed=7):
        ...   # images: float32 [100, 784] in [0, 1]; labels: int32 [100]; never ends

The Python side of examples/fashion_mnist.h: the same files, checks and errors (as Python
exceptions), and `batches` hands out exactly the examples, in exactly the order, that the
C++ `BatchIterator` with the same seed, shard count and shard gives.

Errors, every message naming the file: FileNotFoundError for a missing file (saying which
package installs it); ValueError for a file that is damaged (corrupt or truncated gzip, fewer
or more data bytes than the IDX header declares) or not what is expected (bad magic, an
element type other than unsigned byte, a wrong rank, image and label counts that differ, a
label outside 0..9). Other OSErrors (a directory, no permission) propagate as `open` raises
them. Sizes in a header are never trusted: nothing is allocated beyond what the file can
hold.
"""

import gzip
import operator
import os
import stat
import struct
import zlib

import numpy as np

__all__ = ["DEFAULT_DATA_DIR", "NUM_CLASSES", "CLASS_NAMES", "load_data", "load_split",
           "read_idx", "batches"]

# Where Debian's dataset-fashion-mnist package installs the files.
DEFAULT_DATA_DIR = "/usr/share/datasets/fashion-mnist"
NUM_CLASSES = 10
CLASS_NAMES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot")

_UNSIGNED_BYTE = 0x08
_MAX_RANK = 8
_MAX_DEFLATE_RATIO = 1032  # deflate cannot compress better than about 1032:1
_READ_CHUNK = 1 << 20
_MASK64 = (1 << 64) - 1


def _dims_text(dims):
    return "[%s]" % ", ".join(str(d) for d in dims)


def _read_up_to(stream, n):
    """Up to n bytes; fewer only where the data ends."""
    parts, got = [], 0
    while got < n:
        chunk = stream.read(min(n - got, _READ_CHUNK))
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def _read_idx_stream(stream, path, file_size, compressed):
    magic = _read_up_to(stream, 4)
    if len(magic) < 4:
        raise ValueError("%s: ends after %d bytes, inside the 4-byte IDX magic"
                         % (path, len(magic)))
    if magic[0] != 0 or magic[1] != 0:
        raise ValueError("%s: not an IDX file (magic 0x%08x, expected 0x0000TTNN with type TT "
                         "and rank NN)" % (path, struct.unpack(">I", magic)[0]))
    if magic[2] != _UNSIGNED_BYTE:
        raise ValueError("%s: IDX element type 0x%x is not supported (only 0x08, unsigned "
                         "byte)" % (path, magic[2]))
    rank = magic[3]
    if not 1 <= rank <= _MAX_RANK:
        raise ValueError("%s: IDX rank %d is outside [1, %d]" % (path, rank, _MAX_RANK))
    dim_bytes = _read_up_to(stream, 4 * rank)
    if len(dim_bytes) < 4 * rank:
        raise ValueError("%s: ends inside the IDX header (%d dimensions need %d bytes after "
                         "the magic, found %d)" % (path, rank, 4 * rank, len(dim_bytes)))
    dims = struct.unpack(">%dI" % rank, dim_bytes)
    total = 1
    for d in dims:
        total *= d
    header_size = 4 + 4 * rank
    if not compressed and file_size - header_size != total:
        raise ValueError("%s: the header declares %s = %d bytes of data but the file holds %d"
                         % (path, _dims_text(dims), total, max(0, file_size - header_size)))
    if compressed and total > file_size * _MAX_DEFLATE_RATIO + 4096:
        raise ValueError("%s: the header declares %s = %d bytes of data, more than a gzip file "
                         "of %d bytes can hold" % (path, _dims_text(dims), total, file_size))
    data = bytearray(total)
    view = memoryview(data)
    got = 0
    while got < total:
        chunk = stream.read(min(_READ_CHUNK, total - got))
        if not chunk:
            raise ValueError("%s: the header declares %s = %d bytes of data but the %sfile "
                             "holds only %d" % (path, _dims_text(dims), total,
                                                "decompressed " if compressed else "", got))
        view[got:got + len(chunk)] = chunk
        got += len(chunk)
    # Reading past the end also makes gzip check its trailer (CRC-32 and length).
    if stream.read(1):
        raise ValueError("%s: data continues past the %d bytes the header declares for %s"
                         % (path, total, _dims_text(dims)))
    return np.frombuffer(data, dtype=np.uint8).reshape(dims)


def read_idx(path):
    """The IDX file at `path` (gzip-compressed or plain, told apart by the gzip magic bytes,
    not the name) as a writable uint8 numpy array of the dimensions its header gives.
    Only element type 0x08 (unsigned byte) is supported. Errors as in the module's doc."""
    path = os.fspath(path)
    try:
        raw = open(path, "rb")
    except FileNotFoundError:
        raise FileNotFoundError("IDX file %s does not exist" % path) from None
    with raw:
        info = os.fstat(raw.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("IDX file %s is not a regular file" % path)
        file_size = info.st_size
        compressed = raw.read(2) == b"\x1f\x8b"
        raw.seek(0)
        if not compressed:
            return _read_idx_stream(raw, path, file_size, False)
        try:
            with gzip.GzipFile(fileobj=raw, mode="rb") as stream:
                return _read_idx_stream(stream, path, file_size, True)
        except EOFError as e:
            raise ValueError("%s: truncated gzip stream (%s)" % (path, e)) from None
        except (gzip.BadGzipFile, zlib.error) as e:
            raise ValueError("%s: corrupt gzip data (%s)" % (path, e)) from None


def _read_gz_or_plain(data_dir, name):
    """(array, path) of <data_dir>/<name>.gz, or of <data_dir>/<name> when only that
    exists."""
    gz_path = os.path.join(data_dir, name + ".gz")
    plain_path = os.path.join(data_dir, name)
    if os.path.exists(gz_path) or not os.path.exists(plain_path):
        try:
            return read_idx(gz_path), gz_path
        except FileNotFoundError:
            raise FileNotFoundError(
                "IDX file %s does not exist (nor %s); `bash scripts/setup.sh` installs "
                "Debian's dataset-fashion-mnist package, which puts it in %s"
                % (gz_path, plain_path, DEFAULT_DATA_DIR)) from None
    return read_idx(plain_path), plain_path


def load_split(split, data_dir=None):
    """(images, labels) of split "train" (60,000 examples) or "t10k" (10,000) from
    `data_dir` (default DEFAULT_DATA_DIR): <split>-images-idx3-ubyte.gz and
    <split>-labels-idx1-ubyte.gz (or the same names without .gz when the .gz files are
    absent). images: uint8 [N, rows, cols] (28 x 28 for Fashion-MNIST); labels: uint8 [N],
    each in [0, 10). ValueError for another split; errors as in the module's doc."""
    if split not in ("train", "t10k"):
        raise ValueError('Fashion-MNIST split "%s" is unknown (use "train" or "t10k")'
                         % (split,))
    data_dir = DEFAULT_DATA_DIR if data_dir is None else os.fspath(data_dir)
    images, images_path = _read_gz_or_plain(data_dir, split + "-images-idx3-ubyte")
    labels, labels_path = _read_gz_or_plain(data_dir, split + "-labels-idx1-ubyte")
    if images.ndim != 3:
        raise ValueError("%s: images need 3 dimensions [count, rows, cols], found %s"
                         % (images_path, _dims_text(images.shape)))
    if images.shape[1] < 1 or images.shape[2] < 1:
        raise ValueError("%s: image size %dx%d is empty" % (images_path, images.shape[1],
                                                            images.shape[2]))
    if labels.ndim != 1:
        raise ValueError("%s: labels need 1 dimension [count], found %s"
                         % (labels_path, _dims_text(labels.shape)))
    if images.shape[0] != labels.shape[0]:
        raise ValueError("%s holds %d images but %s holds %d labels"
                         % (images_path, images.shape[0], labels_path, labels.shape[0]))
    bad = np.flatnonzero(labels >= NUM_CLASSES)
    if bad.size:
        raise ValueError("%s: label %d of example %d is outside [0, %d]"
                         % (labels_path, labels[bad[0]], bad[0], NUM_CLASSES - 1))
    return images, labels


def load_data(data_dir=None):
    """((train_images, train_labels), (test_images, test_labels)), as keras'
    fashion_mnist.load_data(): uint8 images [N, 28, 28] and uint8 labels [N] (N = 60,000
    and 10,000), writable numpy arrays in file order. Reads `data_dir` (default
    DEFAULT_DATA_DIR) and never downloads. Errors as in load_split."""
    return load_split("train", data_dir), load_split("t10k", data_dir)


# --------------------------------------------------------------------------- batches
# The C++ BatchIterator's order, bit for bit: std::mt19937_64 seeded with
# Mix(Mix(Mix(seed) ^ shard) ^ epoch), a Fisher-Yates shuffle drawing j uniformly in [0, i)
# by rejection (UniformBelow), over the shard's indices in increasing order.

def _mix(x):
    """SplitMix64's finalizer (fashion_mnist.cc's Mix)."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def _mt19937_64_blocks(seed):
    """The outputs of std::mt19937_64(seed), forever, in uint64 arrays of 312."""
    n, m = 312, 156
    state = [seed & _MASK64]
    for i in range(1, n):
        prev = state[-1]
        state.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & _MASK64)
    mt = np.array(state, dtype=np.uint64)
    upper, lower = np.uint64(0xFFFFFFFF80000000), np.uint64(0x7FFFFFFF)
    matrix_a, zero, one = np.uint64(0xB5026F5AA96619E9), np.uint64(0), np.uint64(1)

    def twisted(x_high, x_next):
        x = (x_high & upper) | (x_next & lower)
        return (x >> one) ^ np.where(x & one, matrix_a, zero)

    while True:
        # The sequential twist, in three vectorized runs: entries [0, n-m) read only old
        # entries; [n-m, n-1) read new entries i-(n-m); n-1 reads the new entry 0.
        new = np.empty_like(mt)
        new[:n - m] = mt[m:] ^ twisted(mt[:n - m], mt[1:n - m + 1])
        new[n - m:n - 1] = new[:m - 1] ^ twisted(mt[n - m:n - 1], mt[n - m + 1:])
        new[n - 1] = new[m - 1] ^ twisted(mt[n - 1:], new[:1])[0]
        mt = new
        y = mt.copy()
        y ^= (y >> np.uint64(29)) & np.uint64(0x5555555555555555)
        y ^= (y << np.uint64(17)) & np.uint64(0x71D67FFFEDA60000)
        y ^= (y << np.uint64(37)) & np.uint64(0xFFF7EEE000000000)
        y ^= y >> np.uint64(43)
        yield y


def _mt19937_64(seed):
    """The outputs of std::mt19937_64(seed), forever, as Python ints."""
    for block in _mt19937_64_blocks(seed):
        yield from block.tolist()


def _epoch_order(shard_indices, seed, shard, epoch):
    """The shard's dataset indices in epoch `epoch`'s order (a new list): the C++
    BatchIterator's Fisher-Yates shuffle, whose draw for position i is uniform in [0, i]
    by rejecting outputs at or above the largest multiple of i + 1."""
    order = list(shard_indices)
    rng_seed = _mix(_mix(_mix(seed) ^ shard) ^ epoch)
    if len(order) < 2:
        return order
    # All draws at once: a rejection (odds about len/2**64 per draw) falls back to drawing
    # one at a time, which gives the same order.
    sizes = np.arange(len(order), 1, -1, dtype=np.uint64)
    blocks, draws, have = _mt19937_64_blocks(rng_seed), [], 0
    while have < len(sizes):
        draws.append(next(blocks))
        have += len(draws[-1])
    draws = np.concatenate(draws)[:len(sizes)]
    mask = np.uint64(_MASK64)
    if np.any(draws >= mask - mask % sizes):
        return _epoch_order_one_by_one(order, rng_seed)
    for i, j in zip(range(len(order) - 1, 0, -1), (draws % sizes).tolist()):
        order[i], order[j] = order[j], order[i]
    return order


def _epoch_order_one_by_one(order, rng_seed):
    rng = _mt19937_64(rng_seed)
    for i in range(len(order), 1, -1):
        limit = _MASK64 - _MASK64 % i
        r = next(rng)
        while r >= limit:
            r = next(rng)
        j = r % i
        order[i - 1], order[j] = order[j], order[i - 1]
    return order


def _as_index(value, what):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError("%s must be an integer, found %r" % (what, value)) from None


def batches(images, labels, batch_size, seed, num_shards=1, shard=0):
    """Full batches of shard `shard` of `num_shards` of (images, labels), shuffled anew every
    epoch, forever: a generator of (float32 [batch_size, example_size], int32 [batch_size]).

    `images` is [N, ...] (uint8 pixels are scaled by 1/255 to [0, 1], as the C++ batches
    are; floating pixels are passed through as float32); `labels` is [N]. Shard i of n holds
    the examples whose index is i modulo n (disjoint shards covering the data). Each epoch
    visits every example of the shard once, in an order that depends on (seed, shard,
    epoch) only, the C++ BatchIterator's order for the same arguments; a batch that reaches
    the end of an epoch is completed from the next one (batch_size may exceed the shard).
    `seed` is any integer, taken modulo 2**64 as C++'s uint64 would take it.

    The arguments are checked at the call, not at the first batch: ValueError for images and
    labels of different lengths, batch_size < 1, num_shards < 1, shard outside
    [0, num_shards) or an empty shard; TypeError for non-integers. The arrays are read, not
    copied: changing them changes later batches."""
    images = np.asarray(images)
    labels = np.asarray(labels)
    batch_size = _as_index(batch_size, "batch_size")
    seed = _as_index(seed, "seed") & _MASK64
    num_shards = _as_index(num_shards, "num_shards")
    shard = _as_index(shard, "shard")
    if images.ndim < 1 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
        raise ValueError("batches: images %s and labels %s do not hold the same number of "
                         "examples" % (_dims_text(images.shape), _dims_text(labels.shape)))
    if batch_size < 1:
        raise ValueError("batches: batch_size is %d, must be positive" % batch_size)
    if num_shards < 1:
        raise ValueError("batches: num_shards is %d, must be at least 1" % num_shards)
    if not 0 <= shard < num_shards:
        raise ValueError("batches: shard %d is outside [0, %d)" % (shard, num_shards))
    size = images.shape[0]
    if shard >= size:
        raise ValueError("batches: shard %d of %d is empty: the data has only %d examples"
                         % (shard, num_shards, size))
    return _batches(images.reshape(size, -1), labels, batch_size, seed, num_shards, shard)


def _batches(images, labels, batch_size, seed, num_shards, shard):
    shard_indices = range(shard, images.shape[0], num_shards)
    scale = np.uint8 == images.dtype
    epoch = 0
    order = np.asarray(_epoch_order(shard_indices, seed, shard, epoch), dtype=np.int64)
    position = 0
    while True:
        rows = np.empty(batch_size, dtype=np.int64)
        filled = 0
        while filled < batch_size:
            take = min(batch_size - filled, len(order) - position)
            rows[filled:filled + take] = order[position:position + take]
            filled += take
            position += take
            if position == len(order):
                epoch += 1
                order = np.asarray(_epoch_order(shard_indices, seed, shard, epoch),
                                   dtype=np.int64)
                position = 0
        batch = images[rows].astype(np.float32)
        if scale:
            batch /= np.float32(255)
        yield batch, labels[rows].astype(np.int32)
