#!/usr/bin/python3
"""Peer baseline for issue 6: Fashion-MNIST training in PyTorch on the CPU.

The same model and data as tensorweave's trainer, so the two can be compared in one run:

  data       Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist/*.gz), read
             with gzip + numpy (no torchvision, no download); pixels scaled to [0, 1].
  model      MLP 784-256-10: dense + ReLU, dense; softmax cross-entropy averaged over the
             batch. Weights Glorot-uniform, biases zero (TensorFlow 1.x's dense defaults).
  optimizer  Adagrad, initial accumulator 0.1 (TensorFlow's AdagradOptimizer default).
             torch adds eps=1e-10 to sqrt(accumulator); TensorFlow adds nothing.
  input      every epoch a fresh permutation of the 60,000 training examples, batches
             gathered from one float32 array (what BatchIterator does).
  threads    torch.set_num_threads(2): the project's VMs have 2 cores.

Defaults: batch 100, learning rate 0.1, 10 epochs (6,000 steps). Adagrad with this model
does not reach 88% test accuracy in two epochs at any setting tried (batch 16-100, learning
rate 0.01-0.2; 2026-11-23, seed 1): after 2 epochs the best was about 0.86, and 0.88 was
first reached after about 8.5 epochs at batch 100 / lr 0.1 (5,100 steps) and about 6 epochs
at batch 32 / lr 0.05, which runs at roughly half the examples/s. Higher learning rates
plateau lower (0.87 at lr 0.2). Test accuracy is measured on all 10,000 t10k examples every
--eval-every steps and after the last step; evaluation time is excluded from the training
times.

Prints human-readable lines, then one JSON object as the last line of stdout:
  examples_per_sec      training examples/s after --warmup-steps (steady state)
  train_seconds         time in training steps (excluding evaluation), all epochs
  total_seconds         wall time of the training loop, evaluations included
  seconds_to_target     training-step time until the first evaluation with accuracy
                        >= --target (null if never reached); wall_seconds_to_target the same
                        in wall time; steps_to_target the step count
  final_test_accuracy   after the last step

Run with Debian's interpreter (python3-torch is installed for it, not for a pyenv one):
  /usr/bin/python3 bench/mnist_torch.py [--epochs 10] [--batch-size 100] [--learning-rate 0.1]
`bash scripts/setup.sh bench` installs python3-torch.
"""

import argparse
import gzip
import json
import os
import sys
import time

# Threads that wait for work sleep instead of spinning: on a shared 2-core VM, libgomp's
# default spin-waiting made 2-thread steps 20-30x slower whenever other processes ran
# (measured: 245 ms vs 11 ms per step at load average 7). Set before torch loads libgomp;
# an OMP_WAIT_POLICY in the environment wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import torch  # noqa: E402

DEFAULT_DIR = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    """Returns the uint8 array of an IDX file (gzip or plain), checking the header."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        sys.exit(f"mnist_torch: {path}: not an IDX file of unsigned bytes")
    rank = data[3]
    header = 4 + 4 * rank
    if len(data) < header:
        sys.exit(f"mnist_torch: {path}: truncated IDX header")
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    if int(np.prod(dims)) != len(data) - header:
        sys.exit(f"mnist_torch: {path}: header declares {dims} but holds {len(data) - header} bytes")
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(dims)


def load_split(data_dir, split):
    images = read_idx(os.path.join(data_dir, f"{split}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(data_dir, f"{split}-labels-idx1-ubyte.gz"))
    if images.shape[0] != labels.shape[0]:
        sys.exit(f"mnist_torch: {split}: {images.shape[0]} images but {labels.shape[0]} labels")
    x = torch.from_numpy(images.reshape(images.shape[0], -1).astype(np.float32) / 255.0)
    y = torch.from_numpy(labels.astype(np.int64))
    return x, y


class Mlp(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.hidden = torch.nn.Linear(784, hidden)
        self.out = torch.nn.Linear(hidden, 10)
        for layer in (self.hidden, self.out):
            torch.nn.init.xavier_uniform_(layer.weight)
            torch.nn.init.zeros_(layer.bias)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


def blas_library():
    """The BLAS torch's matmuls went to (Debian's torch uses the libblas.so.3 alternative)."""
    torch.mm(torch.ones(64, 64), torch.ones(64, 64))
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "blas" in line and "/" in line}
    for path in sorted(paths):
        if "libblas.so" in path or "openblas" in path or "blis" in path or "mkl" in path:
            return os.path.realpath(path)
    return "unknown"


def accuracy(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(dim=1) == y).float().mean().item()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", default=DEFAULT_DIR)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--learning-rate", type=float, default=0.1)
    p.add_argument("--initial-accumulator", type=float, default=0.1)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--eval-every", type=int, default=100, help="steps between test evaluations")
    p.add_argument("--warmup-steps", type=int, default=50,
                   help="steps left out of the steady-state examples/s")
    p.add_argument("--target", type=float, default=0.88, help="test accuracy to time")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    blas = blas_library()
    if "/blas/" in blas:  # /usr/lib/x86_64-linux-gnu/blas/: netlib's reference BLAS
        print(f"mnist_torch: warning: torch uses the reference BLAS ({blas}), about 8x slower "
              "than OpenBLAS here; bash scripts/setup.sh bench installs libopenblas0-openmp",
              file=sys.stderr)
    t0 = time.perf_counter()
    train_x, train_y = load_split(args.data_dir, "train")
    test_x, test_y = load_split(args.data_dir, "t10k")
    load_seconds = time.perf_counter() - t0

    model = Mlp(args.hidden)
    optimizer = torch.optim.Adagrad(model.parameters(), lr=args.learning_rate,
                                    initial_accumulator_value=args.initial_accumulator)
    loss_fn = torch.nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(args.seed)

    n = train_x.shape[0]
    steps_per_epoch = n // args.batch_size  # the last partial batch of an epoch is dropped
    step = 0
    train_seconds = 0.0
    steady_seconds = 0.0
    steady_examples = 0
    seconds_to_target = wall_seconds_to_target = steps_to_target = None
    evaluations = []
    loop_start = time.perf_counter()
    for epoch in range(args.epochs):
        order = torch.randperm(n, generator=generator)
        for b in range(steps_per_epoch):
            s = time.perf_counter()
            idx = order[b * args.batch_size:(b + 1) * args.batch_size]
            x, y = train_x[idx], train_y[idx]
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            e = time.perf_counter() - s
            step += 1
            train_seconds += e
            if step > args.warmup_steps:
                steady_seconds += e
                steady_examples += args.batch_size
            if step % args.eval_every == 0:
                acc = accuracy(model, test_x, test_y)
                evaluations.append((step, round(train_seconds, 4), round(acc, 4)))
                if seconds_to_target is None and acc >= args.target:
                    seconds_to_target = train_seconds
                    wall_seconds_to_target = time.perf_counter() - loop_start
                    steps_to_target = step
        print(f"epoch {epoch + 1}: loss {loss.item():.4f}, "
              f"test accuracy {accuracy(model, test_x, test_y):.4f}, "
              f"{train_seconds:.2f} s in training steps", flush=True)
    final_accuracy = accuracy(model, test_x, test_y)
    if step % args.eval_every != 0:  # the last step counts as an evaluation too
        evaluations.append((step, round(train_seconds, 4), round(final_accuracy, 4)))
        if seconds_to_target is None and final_accuracy >= args.target:
            seconds_to_target = train_seconds
            wall_seconds_to_target = time.perf_counter() - loop_start
            steps_to_target = step
    total_seconds = time.perf_counter() - loop_start
    rate = steady_examples / steady_seconds if steady_seconds > 0 else None

    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"MLP 784-{args.hidden}-10, Adagrad lr {args.learning_rate} "
          f"(initial accumulator {args.initial_accumulator}), batch {args.batch_size}")
    print(f"BLAS {blas}; OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}")
    print(f"data loaded in {load_seconds:.2f} s; {step} steps over {args.epochs} epochs")
    print(f"steady state: {rate:.0f} examples/s" if rate else "steady state: too few steps")
    if seconds_to_target is None:
        print(f"test accuracy never reached {args.target}")
    else:
        print(f"test accuracy >= {args.target} after {steps_to_target} steps: "
              f"{seconds_to_target:.2f} s of training ({wall_seconds_to_target:.2f} s wall)")
    print(f"total {total_seconds:.2f} s ({train_seconds:.2f} s in training steps); "
          f"final test accuracy {final_accuracy:.4f}")
    print(json.dumps({
        "peer": "pytorch",
        "torch_version": torch.__version__,
        "threads": torch.get_num_threads(),
        "blas": blas,
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "hidden": args.hidden,
        "batch_size": args.batch_size,
        "learning_rate": args.learning_rate,
        "initial_accumulator": args.initial_accumulator,
        "epochs": args.epochs,
        "steps": step,
        "load_seconds": round(load_seconds, 4),
        "examples_per_sec": round(rate, 1) if rate else None,
        "train_seconds": round(train_seconds, 4),
        "total_seconds": round(total_seconds, 4),
        "target_accuracy": args.target,
        "seconds_to_target": round(seconds_to_target, 4) if seconds_to_target else None,
        "wall_seconds_to_target":
            round(wall_seconds_to_target, 4) if wall_seconds_to_target else None,
        "steps_to_target": steps_to_target,
        "final_test_accuracy": round(final_accuracy, 4),
        "evaluations": evaluations,
    }))


if __name__ == "__main__":
    main()
