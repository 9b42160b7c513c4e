#!/usr/bin/python3
"""The Python front-end's costs against C++ in the same run.

1. step: a cached tiny Session.run (fetch an Identity of a Const, one compute thread)
   from Python against the same step from C++ (build/bench/session_bench,
   BM_SessionRunTiny), in turns. Goal: Python adds at most 10 us per step.
2. wordcount: launch-to-exit of the Python word count (examples/python/wordcount.py)
   against the C++ one (build/examples/wordcount) under `tw launch`, files=1,reduce=1,map=2,
   on the kernel documentation, in turns. Goal: within 1.2x.

    /usr/bin/python3 bench/python_bench.py [--build build] [--rounds 5]
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def python_step_us(build, iterations=200000):
    code = """
import time
import tensorweave.compat.v1 as tf
y = tf.identity(tf.constant(1.0))
s = tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1))
s.run(y)
best = []
for _ in range(5):
    start = time.perf_counter()
    for _ in range(%d):
        s.run(y)
    best.append((time.perf_counter() - start) / %d * 1e6)
print(sorted(best)[2])
""" % (iterations // 5, iterations // 5)
    env = dict(os.environ, PYTHONPATH=str(build / "python"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def cpp_step_us(build):
    out = subprocess.run([str(build / "bench" / "session_bench"),
                          "--benchmark_filter=BM_SessionRunTiny$", "--benchmark_repetitions=5",
                          "--benchmark_format=json"], capture_output=True, text=True, check=True)
    runs = json.loads(out.stdout)["benchmarks"]
    median = [r for r in runs if r.get("aggregate_name") == "median"][0]
    factor = {"ns": 1e-3, "us": 1.0, "ms": 1e3}[median["time_unit"]]
    return median["real_time"] * factor


def launch_seconds(build, program, list_file):
    start = time.perf_counter()
    out = subprocess.run([str(build / "tools" / "tw"), "launch", "--cluster",
                          "files=1,reduce=1,map=2", "--"] + program + [list_file],
                         env=dict(os.environ, PYTHONPATH=str(build / "python")),
                         capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if out.returncode != 0 or "final total" not in out.stdout:
        raise RuntimeError("word count failed:\n" + out.stdout[-2000:] + out.stderr[-2000:])
    return elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    build = pathlib.Path(args.build).resolve()

    py, cc = [], []
    for _ in range(args.rounds):
        cc.append(cpp_step_us(build))
        py.append(python_step_us(build))
    print("tiny cached step: C++ %.2f us, Python %.2f us (medians of %d rounds): Python adds "
          "%.2f us (goal <= 10)" % (statistics.median(cc), statistics.median(py), args.rounds,
                                    statistics.median(py) - statistics.median(cc)))

    corpus = pathlib.Path("/usr/share/doc/linux-doc-6.1")
    files = sorted(str(p) for p in corpus.rglob("*.rst.txt"))
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as list_file:
        list_file.write("\n".join(files) + "\n")
        list_file.flush()
        py, cc = [], []
        for _ in range(args.rounds):
            cc.append(launch_seconds(build, [str(build / "examples" / "wordcount")],
                                     list_file.name))
            py.append(launch_seconds(build, [sys.executable,
                                             str(ROOT / "examples" / "python" / "wordcount.py")],
                                     list_file.name))
    print("word count launch-to-exit (%d files): C++ %.3f s, Python %.3f s (medians of %d "
          "rounds): %.2fx (goal <= 1.2x)" % (len(files), statistics.median(cc),
                                             statistics.median(py), args.rounds,
                                             statistics.median(py) / statistics.median(cc)))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import tensorweave.compat.v1"], check=True,
                   env=dict(os.environ, PYTHONPATH=str(build / "python")))
    interpreter = time.perf_counter() - start
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import numpy"], check=True)
    numpy_only = time.perf_counter() - start
    print("one process: python3 + import tensorweave.compat.v1 %.3f s, of which python3 + "
          "import numpy %.3f s" % (interpreter, numpy_only))


if __name__ == "__main__":
    main()
