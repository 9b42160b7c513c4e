#!/usr/bin/python3
"""Writes Fashion-MNIST (Debian's dataset-fashion-mnist) as TFRecord files of
tf.train.Example records, as TF 1.x's convert_to_records.py wrote MNIST: features
"image_raw" (the 784 pixel bytes), "label" (int64), "height", "width", "depth".

  /usr/bin/python3 examples/python/make_tfrecords.py --out_dir /tmp/fmnist [--shards 4]
      [--split train|test] [--compression GZIP]

Files are <split>-<shard>-of-<shards>.tfrecord; examples are dealt to the shards in turn.
"""
import argparse
import os
import sys

import tensorweave.compat.v1 as tf
from tensorweave.datasets import fashion_mnist


def example(image, label):
    def int64(v):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v)]))
    return tf.train.Example(features=tf.train.Features(feature={
        "image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image.tobytes()])),
        "label": int64(label), "height": int64(28), "width": int64(28), "depth": int64(1)}))


def write(out_dir, split="train", shards=4, compression=None, data_dir=None):
    """Writes the split's shards; returns their paths."""
    images, labels = fashion_mnist.load_split("t10k" if split == "test" else split, data_dir)
    images = images.reshape(len(images), -1)
    os.makedirs(out_dir, exist_ok=True)
    options = tf.python_io.TFRecordOptions(compression) if compression else None
    paths = [os.path.join(out_dir, "%s-%d-of-%d.tfrecord" % (split, s, shards))
             for s in range(shards)]
    writers = [tf.python_io.TFRecordWriter(p, options) for p in paths]
    for i, (image, label) in enumerate(zip(images, labels)):
        writers[i % shards].write(example(image, label).SerializeToString())
    for w in writers:
        w.close()
    return paths


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out_dir", required=True)
    parser.add_argument("--split", default="train", choices=["train", "test"])
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--compression", default=None, choices=[None, "ZLIB", "GZIP"])
    parser.add_argument("--data_dir", default=None)
    args = parser.parse_args(argv)
    if args.shards < 1:
        parser.error("--shards must be at least 1")
    for p in write(args.out_dir, args.split, args.shards, args.compression, args.data_dir):
        print(p)


if __name__ == "__main__":
    main(sys.argv[1:])
