"""tensorweave.datasets.fashion_mnist: Debian's dataset-fashion-mnist files, the reader's
errors (on bad files written here) as Python exceptions, and batches in the C++
BatchIterator's order."""

import gzip
import os
import struct

import numpy as np
import pytest

from tensorweave.datasets import fashion_mnist

needs_dataset = pytest.mark.skipif(
    not os.path.isdir(fashion_mnist.DEFAULT_DATA_DIR),
    reason="dataset-fashion-mnist is not installed (bash scripts/setup.sh)")


@pytest.fixture(scope="module")
def data():
    if not os.path.isdir(fashion_mnist.DEFAULT_DATA_DIR):
        pytest.skip("dataset-fashion-mnist is not installed (bash scripts/setup.sh)")
    return fashion_mnist.load_data()


def idx_bytes(array, magic=None):
    array = np.asarray(array, dtype=np.uint8)
    if magic is None:
        magic = 0x0800 | array.ndim
    return struct.pack(">I", magic) + struct.pack(">%dI" % array.ndim, *array.shape) + \
        array.tobytes()


def write(path, payload, compress=True):
    path.write_bytes(gzip.compress(payload) if compress else payload)
    return path


def write_split(directory, split, images, labels, compress=True):
    suffix = ".gz" if compress else ""
    write(directory / ("%s-images-idx3-ubyte%s" % (split, suffix)), idx_bytes(images), compress)
    write(directory / ("%s-labels-idx1-ubyte%s" % (split, suffix)), idx_bytes(labels), compress)


def small_split(n, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8),
            rng.integers(0, 10, size=n, dtype=np.uint8))


# ----------------------------------------------------------------------------- load_data

def test_load_data_like_keras(data):
    (train_images, train_labels), (test_images, test_labels) = data
    assert train_images.shape == (60000, 28, 28) and train_images.dtype == np.uint8
    assert train_labels.shape == (60000,) and train_labels.dtype == np.uint8
    assert test_images.shape == (10000, 28, 28) and test_images.dtype == np.uint8
    assert test_labels.shape == (10000,) and test_labels.dtype == np.uint8
    assert np.bincount(train_labels).tolist() == [6000] * 10
    assert np.bincount(test_labels).tolist() == [1000] * 10
    assert train_labels[0] == 9  # an ankle boot, as in every copy of the data set
    assert test_labels[:10].tolist() == [9, 2, 1, 1, 6, 1, 4, 6, 5, 7]
    assert train_images.max() == 255 and train_images.min() == 0
    assert train_images.flags.writeable and train_images.flags.c_contiguous


@needs_dataset
def test_default_dir_and_load_split():
    assert fashion_mnist.DEFAULT_DATA_DIR == "/usr/share/datasets/fashion-mnist"
    images, labels = fashion_mnist.load_split("t10k")
    assert images.shape == (10000, 28, 28) and labels.shape == (10000,)
    with pytest.raises(ValueError, match='split "valid" is unknown'):
        fashion_mnist.load_split("valid")


def test_plain_files_and_data_dir(tmp_path):
    train, test = small_split(6, 1), small_split(4, 2)
    write_split(tmp_path, "train", *train, compress=False)
    write_split(tmp_path, "t10k", *test)
    (a, b), (c, d) = fashion_mnist.load_data(tmp_path)  # a path object will do
    np.testing.assert_array_equal(a, train[0])
    np.testing.assert_array_equal(b, train[1])
    np.testing.assert_array_equal(c, test[0])
    np.testing.assert_array_equal(d, test[1])


def test_compression_is_told_by_content_not_name(tmp_path):
    images, _ = small_split(3)
    path = write(tmp_path / "plain.gz", idx_bytes(images), compress=False)
    np.testing.assert_array_equal(fashion_mnist.read_idx(path), images)
    path = write(tmp_path / "packed.idx", idx_bytes(images))
    np.testing.assert_array_equal(fashion_mnist.read_idx(path), images)


def test_missing_files_say_what_installs_them(tmp_path):
    with pytest.raises(FileNotFoundError) as error:
        fashion_mnist.load_data(tmp_path / "nowhere")
    message = str(error.value)
    assert str(tmp_path / "nowhere" / "train-images-idx3-ubyte.gz") in message
    assert "scripts/setup.sh" in message and "dataset-fashion-mnist" in message
    write_split(tmp_path, "train", *small_split(2))
    with pytest.raises(FileNotFoundError, match="t10k-images-idx3-ubyte.gz"):
        fashion_mnist.load_data(tmp_path)


def test_read_idx_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="absent.idx"):
        fashion_mnist.read_idx(tmp_path / "absent.idx")


def test_read_idx_gives_a_writable_array(tmp_path):
    images, _ = small_split(2)
    array = fashion_mnist.read_idx(write(tmp_path / "two", idx_bytes(images)))
    assert array.dtype == np.uint8 and array.shape == (2, 28, 28)
    assert array.flags.writeable and array.flags.c_contiguous
    array[0, 0, 0] = 7
    assert array[0, 0, 0] == 7


def test_unreadable_files(tmp_path):
    with pytest.raises(ValueError, match="is not a regular file"):
        fashion_mnist.read_idx(tmp_path)
    path = write(tmp_path / "locked", idx_bytes(np.zeros(4)))
    path.chmod(0)
    if os.access(path, os.R_OK):
        pytest.skip("running as a user who reads any file")
    with pytest.raises(PermissionError, match="locked"):
        fashion_mnist.read_idx(path)


@pytest.mark.parametrize("compress", [True, False])
def test_bad_magic(tmp_path, compress):
    path = write(tmp_path / "bad", b"PK\x03\x04" + bytes(20), compress)
    with pytest.raises(ValueError, match=r"bad: not an IDX file \(magic 0x504b0304"):
        fashion_mnist.read_idx(path)


def test_unsupported_element_type_and_rank(tmp_path):
    path = write(tmp_path / "floats", struct.pack(">II", 0x0D01, 1) + bytes(4))
    with pytest.raises(ValueError, match="floats: IDX element type 0xd is not supported"):
        fashion_mnist.read_idx(path)
    path = write(tmp_path / "rank0", struct.pack(">I", 0x0800))
    with pytest.raises(ValueError, match=r"rank0: IDX rank 0 is outside \[1, 8\]"):
        fashion_mnist.read_idx(path)


@pytest.mark.parametrize("compress", [True, False])
def test_truncated_data(tmp_path, compress):
    images, _ = small_split(3)
    path = write(tmp_path / "short", idx_bytes(images)[:-10], compress)
    with pytest.raises(ValueError, match=r"short: the header declares \[3, 28, 28\] = 2352 "
                                         r"bytes of data but the (decompressed )?file holds"):
        fashion_mnist.read_idx(path)


@pytest.mark.parametrize("compress", [True, False])
def test_truncated_header(tmp_path, compress):
    path = write(tmp_path / "head", struct.pack(">II", 0x0803, 5), compress)
    with pytest.raises(ValueError, match="head: ends inside the IDX header"):
        fashion_mnist.read_idx(path)
    path = write(tmp_path / "tiny", b"\x00\x00", compress)
    with pytest.raises(ValueError, match="tiny: ends after 2 bytes"):
        fashion_mnist.read_idx(path)


@pytest.mark.parametrize("compress", [True, False])
def test_data_past_the_declared_size(tmp_path, compress):
    path = write(tmp_path / "long", idx_bytes(np.zeros(4)) + b"\x01", compress)
    with pytest.raises(ValueError, match="long: .*holds 5|long: data continues past"):
        fashion_mnist.read_idx(path)


def test_damaged_gzip(tmp_path):
    packed = gzip.compress(idx_bytes(small_split(20)[0]))
    path = tmp_path / "cut.gz"
    path.write_bytes(packed[:len(packed) // 2])
    with pytest.raises(ValueError, match="cut.gz: "):
        fashion_mnist.read_idx(path)
    flipped = bytearray(packed)
    flipped[-6] ^= 0xFF  # the CRC-32 in the trailer
    path = tmp_path / "crc.gz"
    path.write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match="crc.gz: corrupt gzip data"):
        fashion_mnist.read_idx(path)


def test_lying_header_allocates_nothing(tmp_path):
    path = write(tmp_path / "huge", struct.pack(">IIII", 0x0803, 0xFFFFFFFF, 28, 28))
    with pytest.raises(ValueError, match="huge: .*more than a gzip file of"):
        fashion_mnist.read_idx(path)
    path = write(tmp_path / "vast", struct.pack(">IIII", 0x0803, 0xFFFFFFFF, 0xFFFFFFFF, 28))
    with pytest.raises(ValueError, match=r"vast: IDX dimensions \[4294967295, 4294967295\]"
                                         r"\.\.\. describe an impossibly large array"):
        fashion_mnist.read_idx(path)


def test_mismatched_counts_and_bad_labels(tmp_path):
    images, labels = small_split(5)
    write_split(tmp_path, "t10k", images, labels[:4])
    with pytest.raises(ValueError, match="t10k-images-idx3-ubyte.gz holds 5 images but .*"
                                         "t10k-labels-idx1-ubyte.gz holds 4 labels"):
        fashion_mnist.load_split("t10k", tmp_path)
    labels[3] = 10
    write_split(tmp_path, "t10k", images, labels)
    with pytest.raises(ValueError, match=r"t10k-labels-idx1-ubyte.gz: label 10 of example 3 "
                                         r"is outside \[0, 9\]"):
        fashion_mnist.load_split("t10k", tmp_path)
    write_split(tmp_path, "t10k", images.reshape(5, 784), labels)
    with pytest.raises(ValueError, match="images need 3 dimensions"):
        fashion_mnist.load_split("t10k", tmp_path)


# ----------------------------------------------------------------------------- batches

def indexed(n):
    """Images whose two pixels spell their own index, to read the order back from batches."""
    index = np.arange(n)
    return np.stack([index >> 8, index & 255], axis=1).astype(np.uint8), np.zeros(n, np.uint8)


def indices_of(images):
    pixels = np.rint(images * 255).astype(np.int64)
    return (pixels[:, 0] << 8 | pixels[:, 1]).tolist()


def test_batches_of_real_data(data):
    (train_images, train_labels), _ = data
    it = fashion_mnist.batches(train_images, train_labels, 64, seed=3)
    images, labels = next(it)
    assert images.shape == (64, 784) and images.dtype == np.float32
    assert labels.shape == (64,) and labels.dtype == np.int32
    assert images.min() >= 0.0 and images.max() <= 1.0
    # Each row is an example's pixels / 255 with its label.
    matches = [np.flatnonzero((train_images.reshape(-1, 784) == np.rint(row * 255))
                              .all(axis=1)) for row in images[:4]]
    for row, label, found in zip(images[:4], labels[:4], matches):
        assert found.size >= 1 and label in train_labels[found]
        np.testing.assert_array_equal(
            row, train_images.reshape(-1, 784)[found[0]].astype(np.float32) / np.float32(255))


# Orders printed by the C++ BatchIterator (examples/fashion_mnist.h) over the 10,000-example
# test split, and pinned in examples/fashion_mnist_test.cc too: the Python batches hand out
# the same examples in the same order, so runs in either language are reproducible.
@pytest.mark.parametrize("num_shards,shard,seed,batch_size,expected", [
    (1, 0, 42, 10, [[7625, 5073, 8845, 3895, 9709, 5691, 7014, 8558, 1109, 5823],
                    [7426, 7366, 1870, 126, 6717, 6423, 7478, 4390, 183, 1435],
                    [9441, 5653, 9668, 5148, 4492, 4077, 1832, 7876, 3293, 373]]),
    (3, 1, 7, 8, [[8473, 9448, 3817, 8221, 694, 1033, 4402, 7066]]),
])
def test_same_order_as_the_cpp_batch_iterator(num_shards, shard, seed, batch_size, expected):
    images, labels = indexed(10000)
    it = fashion_mnist.batches(images, labels, batch_size, seed, num_shards, shard)
    assert [indices_of(next(it)[0]) for _ in expected] == expected


def test_same_order_as_the_cpp_batch_iterator_across_epochs():
    images, labels = indexed(5)
    assert indices_of(next(fashion_mnist.batches(images, labels, 15, 3))[0]) == [
        2, 1, 4, 0, 3, 2, 0, 1, 3, 4, 3, 4, 2, 1, 0]
    # A negative seed is taken modulo 2**64, as C++'s uint64 takes -1.
    assert indices_of(next(fashion_mnist.batches(images, labels, 10, -1))[0]) == [
        0, 4, 1, 2, 3, 1, 3, 2, 0, 4]


def test_shards_are_disjoint_and_every_epoch_a_permutation():
    images, labels = indexed(103)
    epochs = 3
    seen = []
    for shard in range(4):
        size = len(range(shard, 103, 4))
        it = fashion_mnist.batches(images, labels, 7, seed=11, num_shards=4, shard=shard)
        stream = []
        while len(stream) < epochs * size:
            stream += indices_of(next(it)[0])
        orders = [stream[e * size:(e + 1) * size] for e in range(epochs)]
        for order in orders:
            assert sorted(order) == list(range(shard, 103, 4))
        assert orders[0] != orders[1] != orders[2]
        seen += orders[0]
    assert sorted(seen) == list(range(103))


def test_seeds_give_reproducible_orders_and_labels_follow_images():
    images, _ = indexed(50)
    labels = (np.arange(50) % 10).astype(np.uint8)
    a = fashion_mnist.batches(images, labels, 20, seed=5)
    b = fashion_mnist.batches(images, labels, 20, seed=5)
    c = fashion_mnist.batches(images, labels, 20, seed=6)
    xa, ya = next(a)
    xb, _ = next(b)
    xc, _ = next(c)
    np.testing.assert_array_equal(xa, xb)
    assert indices_of(xa) != indices_of(xc)
    assert (np.array(indices_of(xa)) % 10 == ya).all()


def test_strided_uint8_images():
    images, labels = indexed(300)
    expected = next(fashion_mnist.batches(images, labels, 50, seed=4))[0]
    # Column-major: the rows of the [N, 2] view are not contiguous.
    strided = next(fashion_mnist.batches(np.asfortranarray(images), labels, 50, seed=4))[0]
    np.testing.assert_array_equal(strided, expected)
    assert strided.dtype == np.float32
    # Exactly byte / 255 in float32, as the C++ batches hold a pixel.
    np.testing.assert_array_equal(
        expected, images[indices_of(expected)].astype(np.float32) / np.float32(255))


def test_float_images_pass_through():
    images = np.linspace(0, 1, 12, dtype=np.float64).reshape(3, 2, 2)
    batch, _ = next(fashion_mnist.batches(images, np.zeros(3), 3, seed=0))
    assert batch.dtype == np.float32 and batch.shape == (3, 4)
    assert sorted(batch[:, 0].tolist()) == pytest.approx(images[:, 0, 0].tolist())


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(batch_size=0), ValueError, "batch_size is 0, must be positive"),
    (dict(num_shards=0), ValueError, "num_shards is 0"),
    (dict(num_shards=2, shard=2), ValueError, r"shard_index 2 is outside \[0, 2\)"),
    (dict(num_shards=8, shard=6), ValueError, "shard 6 of 8 is empty"),
    (dict(batch_size=2.5), TypeError, "batch_size must be an integer"),
    (dict(seed=None), TypeError, "seed must be an integer"),
])
def test_batches_argument_errors_are_raised_at_the_call(kwargs, error, message):
    images, labels = indexed(5)
    arguments = dict(batch_size=2, seed=1)
    arguments.update(kwargs)
    with pytest.raises(error, match=message):
        fashion_mnist.batches(images, labels, **arguments)


def test_batches_images_and_labels_must_match():
    images, labels = indexed(5)
    with pytest.raises(ValueError, match="do not hold the same number of examples"):
        fashion_mnist.batches(images, labels[:4], 2, 1)
