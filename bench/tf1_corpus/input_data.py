"""The data-loading line of the corpus programs: TF 1.x's
`tensorflow.examples.tutorials.mnist.input_data.read_data_sets`, over Debian's Fashion-MNIST
(dataset-fashion-mnist: the same IDX files, 28x28 images of 10 classes, as MNIST, which no
Debian package ships and which cannot be downloaded here).

The runner (run_corpus.py) replaces a program's `from tensorflow.examples.tutorials.mnist
import input_data` with `import input_data` and puts this directory on its path. Behaves as
TF 1.x's module: images float32 in [0, 1], flattened to 784 unless reshape=False, labels
one-hot or class numbers, a validation split taken from the front of the training set,
next_batch shuffling each epoch."""

import collections

import numpy as np

from tensorweave.datasets import fashion_mnist

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


class DataSet:
    def __init__(self, images, labels, one_hot, seed):
        self._images = images
        self._labels = np.eye(10, dtype=np.float32)[labels] if one_hot else labels
        self._num_examples = images.shape[0]
        self._epochs_completed = 0
        self._index_in_epoch = 0
        self._rng = np.random.RandomState(seed)

    @property
    def images(self):
        return self._images

    @property
    def labels(self):
        return self._labels

    @property
    def num_examples(self):
        return self._num_examples

    @property
    def epochs_completed(self):
        return self._epochs_completed

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        start = self._index_in_epoch
        if self._epochs_completed == 0 and start == 0 and shuffle:
            self._shuffle()
        if start + batch_size > self._num_examples:
            self._epochs_completed += 1
            rest = self._num_examples - start
            images_rest = self._images[start:]
            labels_rest = self._labels[start:]
            if shuffle:
                self._shuffle()
            self._index_in_epoch = batch_size - rest
            end = self._index_in_epoch
            return (np.concatenate((images_rest, self._images[:end]), axis=0),
                    np.concatenate((labels_rest, self._labels[:end]), axis=0))
        self._index_in_epoch += batch_size
        end = self._index_in_epoch
        return self._images[start:end], self._labels[start:end]

    def _shuffle(self):
        order = self._rng.permutation(self._num_examples)
        self._images = self._images[order]
        self._labels = self._labels[order]


def read_data_sets(train_dir=None, fake_data=False, one_hot=False, dtype=None, reshape=True,
                   validation_size=5000, seed=None, source_url=None):
    (train_images, train_labels), (test_images, test_labels) = fashion_mnist.load_data()
    shape = (-1, 784) if reshape else (-1, 28, 28, 1)
    train_images = (train_images.astype(np.float32) / 255.0).reshape(shape)
    test_images = (test_images.astype(np.float32) / 255.0).reshape(shape)
    train_labels = train_labels.astype(np.int64)
    test_labels = test_labels.astype(np.int64)
    validation = DataSet(train_images[:validation_size], train_labels[:validation_size],
                         one_hot, seed)
    train = DataSet(train_images[validation_size:], train_labels[validation_size:], one_hot,
                    seed)
    test = DataSet(test_images, test_labels, one_hot, seed)
    return Datasets(train=train, validation=validation, test=test)
