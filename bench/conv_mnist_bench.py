#!/usr/bin/python3
"""TF's classic "deep MNIST" conv net (conv 5x5x32, max pool, conv 5x5x64, max pool,
dense 1024, dropout 0.5, dense 10; Adam 1e-3; batch 100) on Fashion-MNIST: tensorweave
against PyTorch on the CPU with the same threads, in turns (issue 30, section 3).

Each round runs, one after the other:
  layers   forward+backward of each convolution as training runs it (conv1: the filter's
           gradient only, its input is the data; conv2: both gradients), median of --reps
           runs, in PyTorch (nn.Conv2d, NCHW) and in tensorweave (tf.nn.conv2d and
           tf.gradients through the Python front-end, NHWC);
  torch    the whole model trained for --steps steps in PyTorch, in this process;
  one      examples/mnist_ps --model=conv as one process (no cluster: TF_CONFIG unset);
  cluster  examples/mnist_ps --model=conv under `tw launch` as 1 ps + 2 workers
           (asynchronous), examples/s of all workers together, and the chief's peak RSS.
Rates exclude the first --warmup steps (torch) or are mnist_ps's own "examples/s" line
(which starts at its first step). Each row is the median round; ratios are medians of the
per-round ratios, so the VM's drift between rounds cancels.

  /usr/bin/python3 bench/conv_mnist_bench.py [--build build] [--rounds 3] [--steps 300]

Needs python3-torch (bash scripts/setup.sh bench) and a build with the Python package.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see bench/mnist_torch.py
import numpy as np  # noqa: E402
import torch  # noqa: E402

CONV_LAYERS = {  # name: (batch, size, in_channels, out_channels, input needs a gradient)
    "conv1 (64 x 28x28x1, 5x5, 32)": (64, 28, 1, 32, False),
    "conv2 (64 x 14x14x32, 5x5, 64)": (64, 14, 32, 64, True),
}


def median_seconds(fn, reps):
    fn()  # warm-up: buffers, kernels' scratch
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def torch_layer(batch, size, cin, cout, input_grad):
    conv = torch.nn.Conv2d(cin, cout, 5, padding=2)
    x = torch.rand(batch, cin, size, size, requires_grad=input_grad)
    dy = torch.rand(batch, cout, size, size)

    def step():
        conv.zero_grad(set_to_none=True)
        conv(x).backward(dy)
    return step


def tw_layer(tf, batch, size, cin, cout, input_grad):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.constant(np.random.rand(batch, size, size, cin).astype(np.float32))
        w = tf.Variable(np.random.rand(5, 5, cin, cout).astype(np.float32) * 0.1)
        y = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
        dy = tf.constant(np.random.rand(batch, size, size, cout).astype(np.float32))
        grads = tf.gradients(tf.reduce_sum(y * dy), [x, w] if input_grad else [w])
        session = tf.Session(graph=graph)
        session.run(tf.global_variables_initializer())
    return lambda: session.run(grads)


class DeepMnist(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 32, 5, padding=2)
        self.conv2 = torch.nn.Conv2d(32, 64, 5, padding=2)
        self.dense = torch.nn.Linear(7 * 7 * 64, 1024)
        self.out = torch.nn.Linear(1024, 10)
        self.dropout = torch.nn.Dropout(0.5)

    def forward(self, x):
        x = torch.max_pool2d(torch.relu(self.conv1(x.view(-1, 1, 28, 28))), 2)
        x = torch.max_pool2d(torch.relu(self.conv2(x)), 2)
        x = self.dropout(torch.relu(self.dense(x.flatten(1))))
        return self.out(x)


def torch_training(steps, warmup, batch):
    """Examples/s of PyTorch training the model on random Fashion-MNIST-sized batches (the
    data's values do not change the arithmetic)."""
    model = DeepMnist()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.rand(batch, 784)
    y = torch.randint(0, 10, (batch,))
    for step in range(steps):
        if step == warmup:
            start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    return (steps - warmup) * batch / (time.perf_counter() - start)


def mnist_ps(build, steps, batch, cluster):
    """examples/s from mnist_ps --model=conv's chief, and the chief's peak RSS in MiB (from
    GNU time's report of its own child when not under tw launch, else from /proc)."""
    program = [os.path.join(build, "examples", "mnist_ps"), "--model=conv",
               "--max_steps=%d" % steps, "--batch_size=%d" % batch, "--log_every=1000000"]
    env = dict(os.environ)
    env.pop("TF_CONFIG", None)
    if cluster:
        command = [os.path.join(build, "tools", "tw"), "launch", "--cluster", "ps=1,worker=2",
                   "--", "/usr/bin/time", "-f", "peak_rss_kb %M"] + program
    else:
        command = ["/usr/bin/time", "-f", "peak_rss_kb %M"] + program
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200)
    text = out.stdout + out.stderr
    if out.returncode != 0:
        sys.exit("conv_mnist_bench: mnist_ps failed:\n" + text)
    rate = re.search(r"trained \d+ global steps in [0-9.]+ s: (\d+) examples/s", text)
    rss = [int(v) for v in re.findall(r"peak_rss_kb (\d+)", text)]
    if not rate or not rss:
        sys.exit("conv_mnist_bench: no rate or peak RSS in mnist_ps's output:\n" + text)
    return float(rate.group(1)), max(rss) / 1024.0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    if not os.path.exists("/usr/bin/time"):
        sys.exit("conv_mnist_bench: needs /usr/bin/time (Debian package time)")
    sys.path.insert(0, os.path.join(args.build, "python"))
    import tensorweave.compat.v1 as tf
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    rounds = []
    for r in range(args.rounds):
        row = {}
        for name, shape in CONV_LAYERS.items():
            row[name] = (median_seconds(torch_layer(*shape), args.reps),
                         median_seconds(tw_layer(tf, *shape), args.reps))
        row["torch"] = torch_training(args.steps, args.warmup, args.batch)
        row["one"] = mnist_ps(args.build, args.steps, args.batch, cluster=False)
        row["cluster"] = mnist_ps(args.build, args.steps, args.batch, cluster=True)
        print("round %d: %s" % (r + 1, row), file=sys.stderr, flush=True)
        rounds.append(row)

    def med(values):
        return statistics.median(values)
    print("| forward+backward | PyTorch | tensorweave | ratio (PyTorch time / ours) |")
    print("|---|---|---|---|")
    for name in CONV_LAYERS:
        theirs = med([row[name][0] for row in rounds])
        ours = med([row[name][1] for row in rounds])
        ratio = med([row[name][0] / row[name][1] for row in rounds])
        print("| %s | %.2f ms | %.2f ms | %.2fx |" % (name, theirs * 1e3, ours * 1e3, ratio))
    print()
    print("| training, batch %d | examples/s | vs. PyTorch | peak RSS |" % args.batch)
    print("|---|---|---|---|")
    print("| PyTorch %s, 1 process (baseline) | %.0f | 1.00x | |"
          % (torch.__version__, med([row["torch"] for row in rounds])))
    for key, label in (("one", "tensorweave mnist_ps, 1 process"),
                       ("cluster", "tensorweave mnist_ps, 1 ps + 2 workers")):
        ratios = [row[key][0] / row["torch"] for row in rounds]
        print("| %s | %.0f | %.2fx (rounds %s) | %.0f MiB |" % (
            label, med([row[key][0] for row in rounds]), med(ratios),
            ", ".join("%.2f" % v for v in ratios), med([row[key][1] for row in rounds])))


if __name__ == "__main__":
    main()
