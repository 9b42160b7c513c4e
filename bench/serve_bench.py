#!/usr/bin/python3
"""`tw serve` (issue 33) against the same model in a PyTorch HTTP handler, in one run.

The Fashion-MNIST MLP (784 -> 128 relu -> 10 softmax; trained for 500 steps here) is
exported as a SavedModel and served by `tw serve`; the same weights go into a PyTorch
nn.Sequential behind Python's ThreadingHTTPServer answering the same REST request
({"instances": [...]} -> {"predictions": [...]}) in a process of its own. One client in
this process sends real test images over a kept-alive connection, batch 1 and batch 64,
the two servers in turns (--rounds, alternating which goes first), each with the same
compute threads (--threads). Prints per server and batch the latency p50/p99 of a
request and the examples/s of the sequential requests, and the ratios. Both servers'
predictions are checked against each other first.

  /usr/bin/python3 bench/serve_bench.py [--rounds 3] [--requests 300] [--threads 2]
      [--build build]
"""
import argparse
import http.client
import http.server
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def torch_server(weights_path, threads):
    """The PyTorch side: serves until killed; prints its port first."""
    import torch
    torch.set_num_threads(threads)
    w = np.load(weights_path)
    model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10), torch.nn.Softmax(dim=1))
    with torch.no_grad():
        model[0].weight.copy_(torch.from_numpy(w["w1"].T))
        model[0].bias.copy_(torch.from_numpy(w["b1"]))
        model[2].weight.copy_(torch.from_numpy(w["w2"].T))
        model[2].bias.copy_(torch.from_numpy(w["b2"]))
    model.eval()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the client uses
        disable_nagle_algorithm = True  # as tw serve: no 40 ms wait for a delayed ACK

        def do_POST(self):  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            x = torch.tensor(body["instances"], dtype=torch.float32)
            with torch.no_grad():
                probs = model(x)
            data = json.dumps({"predictions": probs.tolist()}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


def export_model(export_dir, weights_path):
    import tensorweave.compat.v1 as tf
    from tensorweave.datasets import fashion_mnist
    (train_x, train_y), _ = fashion_mnist.load_data()
    train_x = train_x.reshape(-1, 784).astype(np.float32) / 255.0
    x = tf.placeholder(tf.float32, [None, 784], name="images")
    y = tf.placeholder(tf.int64, [None])
    h = tf.layers.dense(x, 128, activation=tf.nn.relu, name="hidden")
    logits = tf.layers.dense(h, 10, name="logits")
    probs = tf.nn.softmax(logits, name="probs")
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    train = tf.train.AdamOptimizer(0.001).minimize(loss)
    rng = np.random.RandomState(0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(500):
            idx = rng.randint(0, len(train_x), 64)
            sess.run(train, {x: train_x[idx], y: train_y[idx]})
        graph = tf.get_default_graph()
        values = sess.run({k: graph.get_tensor_by_name(n) for k, n in [
            ("w1", "hidden/kernel:0"), ("b1", "hidden/bias:0"), ("w2", "logits/kernel:0"),
            ("b2", "logits/bias:0")]})
        np.savez(weights_path, **values)
        tf.saved_model.simple_save(sess, export_dir, {"images": x}, {"probs": probs})


def start(args):
    process = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    found = re.search(r"http://[^:/]+:(\d+)/", line)
    try:
        return process, int(found.group(1)) if found else int(line)
    except ValueError:
        process.kill()
        raise RuntimeError("%s did not print its port: %r" % (args[0], line))


def request(connection, path, batch):
    body = json.dumps({"instances": batch.tolist()})
    connection.request("POST", path, body, {"Content-Type": "application/json"})
    response = connection.getresponse()
    data = response.read()
    if response.status != 200:
        raise RuntimeError("HTTP %d: %s" % (response.status, data[:200]))
    return json.loads(data)["predictions"]


def connect(port):
    """A kept-alive connection that sends a request's headers and body at once (without
    TCP_NODELAY, Nagle's algorithm would hold the body for the server's delayed ACK)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.connect()
    connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return connection


def measure(port, path, images, batch_size, requests):
    connection = connect(port)
    for i in range(10):  # warm up
        request(connection, path, images[i * batch_size:(i + 1) * batch_size])
    latencies = []
    for i in range(requests):
        start_at = (i * batch_size) % (len(images) - batch_size)
        t0 = time.perf_counter()
        request(connection, path, images[start_at:start_at + batch_size])
        latencies.append(time.perf_counter() - t0)
    connection.close()
    latencies.sort()
    return {"p50": latencies[len(latencies) // 2] * 1e3,
            "p99": latencies[int(len(latencies) * 0.99)] * 1e3,
            "examples/s": batch_size * len(latencies) / sum(latencies)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--torch-server", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_server:
        torch_server(args.torch_server, args.threads)
        return
    sys.path.insert(0, os.path.join(args.build, "python"))
    from tensorweave.datasets import fashion_mnist
    work = tempfile.mkdtemp(prefix="serve_bench_")
    export_dir, weights = os.path.join(work, "fashion", "1"), os.path.join(work, "w.npz")
    export_model(export_dir, weights)
    _, (test_x, _) = fashion_mnist.load_data()
    images = test_x.reshape(-1, 784).astype(np.float32) / 255.0
    tw = os.path.join(args.build, "tools", "tw")
    commands = {
        "tw serve": [tw, "serve", os.path.dirname(export_dir), "--model_name", "fashion",
                     "--bind-host", "127.0.0.1", "--port", "0", "--threads", str(args.threads)],
        "pytorch": [sys.executable, os.path.abspath(__file__), "--torch-server", weights,
                    "--threads", str(args.threads)],
    }
    servers = {}
    path = "/v1/models/fashion:predict"
    try:
        for name, command in commands.items():
            servers[name] = start(command)
        check = {}
        for name, (_, port) in servers.items():
            connection = connect(port)
            check[name] = np.array(request(connection, path, images[:64]))
            connection.close()
        np.testing.assert_allclose(check["tw serve"], check["pytorch"], atol=1e-5)
        results = {(n, b): [] for n in servers for b in (1, 64)}
        for r in range(args.rounds):
            order = list(servers) if r % 2 == 0 else list(reversed(list(servers)))
            for batch in (1, 64):
                for name in order:
                    results[(name, batch)].append(
                        measure(servers[name][1], path, images, batch, args.requests))
    finally:
        for process, _ in servers.values():
            process.kill()
            process.wait()
    print("Fashion-MNIST MLP, %d rounds of %d requests, %d threads each (medians)" %
          (args.rounds, args.requests, args.threads))
    print("%-10s %5s %10s %10s %12s" % ("server", "batch", "p50 ms", "p99 ms", "examples/s"))
    med = {}
    for (name, batch), runs in sorted(results.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        med[(name, batch)] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        m = med[(name, batch)]
        print("%-10s %5d %10.3f %10.3f %12.0f" % (name, batch, m["p50"], m["p99"],
                                                   m["examples/s"]))
    for batch in (1, 64):
        tw_m, torch_m = med[("tw serve", batch)], med[("pytorch", batch)]
        print("batch %d: tw serve / pytorch examples/s %.2fx, p50 %.2fx of the time" %
              (batch, tw_m["examples/s"] / torch_m["examples/s"], tw_m["p50"] / torch_m["p50"]))


if __name__ == "__main__":
    main()
