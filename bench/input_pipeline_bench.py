#!/usr/bin/python3
"""Input pipelines on Fashion-MNIST's training set as TFRecord files of tf.train.Example
records (examples/python/make_tfrecords.py): records/s read, parsed, shuffled and batched
(batch 100, pixels scaled to float32) by

  raw       reading the files' bytes, nothing else (`wc -c`: the physical limit here);
  data      tf.data: TFRecordDataset -> shuffle(10000) -> batch(100) -> map(parse_example)
            -> prefetch, TF's recommended order (parse a batch at once);
  data_1    tf.data parsing one record at a time: map(parse_single_example,
            num_parallel_calls=threads) -> shuffle -> batch;
  queue     TF 1.x's queues: string_input_producer -> TFRecordReader.read_up_to(100) ->
            parse_example -> shuffle_batch(enqueue_many, num_threads=threads);
  torch     PyTorch's DataLoader (num_workers=threads) over a Dataset that indexes the
            records by a Python parser of the TFRecord framing and parses each with the
            protobuf Example class (the C++ protobuf runtime behind Python's).

in turns, --rounds times; each row is the median round, ratios medians of per-round ratios.
Goal (issue 31): data at least 2x torch with the same number of threads.

With --trainer python|cpp, instead: examples/python/trainer.py or the C++
examples/mnist_ps.cc as 1 ps + 2 workers under `tw launch`, fed from memory (its default)
and reading the same records through tf.data (--train_files), in turns; the chief's
"examples/s (all workers)" of each. Goal: within 5%.

  /usr/bin/python3 bench/input_pipeline_bench.py [--rounds 3] [--threads 2] [--epochs 1]
  /usr/bin/python3 bench/input_pipeline_bench.py --trainer python|cpp [--rounds 3]
      [--steps 3000]

Needs python3-torch (bash scripts/setup.sh bench) and a build with the Python package.
"""
import argparse
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                                "python"))
import make_tfrecords  # noqa: E402
import tensorweave.compat.v1 as tf  # noqa: E402

BATCH = 100
FEATURES = {"image_raw": tf.FixedLenFeature([], tf.string),
            "label": tf.FixedLenFeature([], tf.int64)}


def _rate(records, seconds):
    return records / seconds if seconds > 0 else float("inf")


def raw(files, _threads, _epochs):
    start = time.perf_counter()
    out = subprocess.run(["wc", "-c"] + files, check=True, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    assert out.stdout
    return seconds


def _drain(fetch, init=None):
    count = 0
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        if init is not None:
            sess.run(init)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        start = time.perf_counter()
        try:
            while True:
                count += len(sess.run(fetch))
        except tf.errors.OutOfRangeError:
            pass
        seconds = time.perf_counter() - start
        coord.request_stop()
        coord.join(threads)
    return count, seconds


def _parse_batch(records):
    parsed = tf.parse_example(records, FEATURES)
    images = tf.cast(tf.decode_raw(parsed["image_raw"], tf.uint8), tf.float32) / 255.0
    return images, parsed["label"]


def data(files, threads, epochs):
    tf.reset_default_graph()
    dataset = (tf.data.TFRecordDataset(files).repeat(epochs).shuffle(10000, seed=1)
               .batch(BATCH).map(_parse_batch, num_parallel_calls=threads).prefetch(1))
    images, _ = dataset.make_one_shot_iterator().get_next()
    count, seconds = _drain(images)
    assert count == 60000 * epochs, count
    return seconds


def data_1(files, threads, epochs):
    tf.reset_default_graph()

    def parse(record):
        parsed = tf.parse_single_example(record, FEATURES)
        image = tf.cast(tf.decode_raw(parsed["image_raw"], tf.uint8), tf.float32) / 255.0
        return image, parsed["label"]
    dataset = (tf.data.TFRecordDataset(files).repeat(epochs)
               .map(parse, num_parallel_calls=threads).shuffle(10000, seed=1).batch(BATCH)
               .prefetch(1))
    images, _ = dataset.make_one_shot_iterator().get_next()
    count, seconds = _drain(images)
    assert count == 60000 * epochs, count
    return seconds


def queue(files, threads, epochs):
    tf.reset_default_graph()
    names = tf.train.string_input_producer(files, num_epochs=epochs, shuffle=False)
    _, records = tf.TFRecordReader().read_up_to(names, BATCH)
    images, labels = _parse_batch(records)
    images.set_shape([None, 784])
    image_batch, _ = tf.train.shuffle_batch([images, labels], BATCH, capacity=12000,
                                            min_after_dequeue=10000, num_threads=threads,
                                            enqueue_many=True, allow_smaller_final_batch=True)
    count, seconds = _drain(image_batch)
    assert count == 60000 * epochs, count
    return seconds


def torch_loader(files, threads, epochs):
    import torch
    import torch.utils.data as tud
    from tensorweave.protobuf import example_pb2

    class Records(tud.Dataset):
        def __init__(self, paths):
            self.index = []  # (path, data offset, length)
            for path in paths:
                with open(path, "rb") as f:
                    blob = f.read()
                at = 0
                while at < len(blob):
                    (length,) = struct.unpack_from("<Q", blob, at)
                    self.index.append((path, at + 12, length))
                    at += 16 + length
            self.handles = {}

        def __len__(self):
            return len(self.index)

        def __getitem__(self, i):
            path, offset, length = self.index[i]
            f = self.handles.get(path)
            if f is None:
                f = self.handles[path] = open(path, "rb")
            f.seek(offset)
            ex = example_pb2.Example.FromString(f.read(length))
            feature = ex.features.feature
            image = np.frombuffer(feature["image_raw"].bytes_list.value[0], np.uint8)
            return (torch.from_numpy(image.astype(np.float32) / 255.0),
                    feature["label"].int64_list.value[0])

    torch.set_num_threads(threads)
    dataset = Records(files)
    loader = tud.DataLoader(dataset, batch_size=BATCH, shuffle=True, num_workers=threads,
                            generator=torch.Generator().manual_seed(1))
    count = 0
    start = time.perf_counter()
    for _ in range(epochs):
        for images, _ in loader:
            count += len(images)
    seconds = time.perf_counter() - start
    assert count == 60000 * epochs, count
    return seconds


RUNS = [("raw", raw), ("data", data), ("data_1", data_1), ("queue", queue),
        ("torch", torch_loader)]


def trainer_rounds(files, rounds, steps, build, program):
    """The trainer's examples/s fed from memory and from the files, in turns: the Python
    trainer (examples/python/trainer.py) or the C++ one (examples/mnist_ps.cc)."""
    import re
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    tw = os.path.join(build, "tools", "tw")
    if program == "cpp":
        trainer = [os.path.join(build, "examples", "mnist_ps")]
    else:
        trainer = [sys.executable, os.path.join(root, "examples", "python", "trainer.py")]
    rates = {"memory": [], "files": []}
    for _ in range(rounds):
        for mode in ("memory", "files"):
            with tempfile.TemporaryDirectory(prefix="tw_trainer_bench_") as ckpt:
                cmd = [tw, "launch", "--cluster", "ps=1,worker=2", "--"] + trainer + [
                    "--checkpoint_dir=" + ckpt, "--max_steps=%d" % steps,
                    "--log_every=%d" % steps, "--save_every=%d" % (10 * steps)]
                if mode == "files":
                    cmd.append("--train_files=" + ",".join(files))
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
                found = re.search(r"([0-9.]+) examples/s \(all workers", out.stdout)
                if out.returncode != 0 or not found:
                    raise RuntimeError("trainer (%s) failed:\n%s%s" % (mode, out.stdout,
                                                                       out.stderr))
                rates[mode].append(float(found.group(1)))
    for mode, values in rates.items():
        print("%s trainer %-6s %8.0f examples/s" % (program, mode, statistics.median(values)))
    print("%s trainer files / memory: %.3fx" % (program, statistics.median(
        f / m for f, m in zip(rates["files"], rates["memory"]))))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trainer", choices=["python", "cpp"], default=None,
                        help="the trainer's rates instead: the Python or the C++ one")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--build", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--only", default=None, help="comma-separated runs")
    args = parser.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None
    with tempfile.TemporaryDirectory(prefix="tw_input_bench_") as tmp:
        files = make_tfrecords.write(tmp, "train", shards=4)
        size = sum(os.path.getsize(f) for f in files)
        if args.trainer:
            trainer_rounds(files, args.rounds, args.steps, args.build, args.trainer)
            return
        print("%d records in %d files, %.1f MB; batch %d, %d threads, %d epoch(s)" %
              (60000, len(files), size / 1e6, BATCH, args.threads, args.epochs))
        rates = {name: [] for name, _ in RUNS}
        for _ in range(args.rounds):
            for name, fn in RUNS:
                if only and name not in only:
                    continue
                seconds = fn(files, args.threads, args.epochs)
                rates[name].append(_rate(60000 * (1 if name == "raw" else args.epochs),
                                         seconds))
        for name, values in rates.items():
            if values:
                print("%-7s %12.0f records/s" % (name, statistics.median(values)))
        for name in ("data", "data_1", "queue"):
            if rates[name] and rates["torch"]:
                ratio = statistics.median(a / b for a, b in zip(rates[name], rates["torch"]))
                print("%s / torch: %.2fx" % (name, ratio))
            if rates[name] and rates["raw"]:
                ratio = statistics.median(a / b for a, b in zip(rates[name], rates["raw"]))
                print("%s / raw:   %.3fx" % (name, ratio))


if __name__ == "__main__":
    main(sys.argv[1:])
