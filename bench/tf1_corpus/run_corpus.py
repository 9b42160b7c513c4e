#!/usr/bin/python3
"""Runs real TF 1.x distributed programs on tensorweave, as written but for two lines.

    PYTHONPATH=build/python /usr/bin/python3 bench/tf1_corpus/run_corpus.py CORPUS [NAME...]

CORPUS is a folder a developer filled with other people's programs (not ours, so never in
this repository; this script fetches nothing), one subfolder per program as programs.json
beside this file names them: the repository and path each came from, how it takes its role
(flags or TF_CONFIG), its arguments, and the line of its output that is its result.

Each program is copied to a scratch folder where exactly two lines change: its TensorFlow
import (`import tensorflow as tf` becomes `import tensorweave.compat.v1 as tf`) and its
data-loading import (`from tensorflow.examples.tutorials.mnist import input_data` becomes
this folder's input_data.py, Debian's Fashion-MNIST in MNIST's format). Then it runs as a
cluster of 1 ps and 2 workers, one process per task, on loopback, with no tensorweave
variable set (TW_* and TF_CONFIG are removed from the environment). The workers must exit
0 and the chief's output must show the result; the ps tasks, which `server.join()` forever
as in TF, are then stopped (SIGTERM), as a TFJob's are when its workers succeed.

Prints one line per program and exits 1 when any failed. docs/python.md keeps the table."""

import argparse
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
TF_IMPORT = re.compile(r"^(\s*)import tensorflow as tf\s*$")
DATA_IMPORT = re.compile(r"^(\s*)from tensorflow\.examples\.tutorials\.mnist import input_data\s*$")


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def rewrite(source):
    """The program with its two lines changed; the number of lines changed per kind."""
    lines, changed = [], {"import": 0, "data": 0}
    for line in source.splitlines(keepends=True):
        tf = TF_IMPORT.match(line)
        data = DATA_IMPORT.match(line)
        if tf:
            line = tf.group(1) + "import tensorweave.compat.v1 as tf\n"
            changed["import"] += 1
        elif data:
            line = data.group(1) + "import input_data\n"
            changed["data"] += 1
        lines.append(line)
    return "".join(lines), changed


def task_env(spec, cluster, job, index):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TW_") and k != "TF_CONFIG"}
    # Absolute: the tasks run in the program's scratch folder.
    inherited = [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                 if p]
    env["PYTHONPATH"] = os.pathsep.join([str(HERE)] + inherited)
    env["PYTHONUNBUFFERED"] = "1"
    if spec["roles"] == "tf_config":
        env["TF_CONFIG"] = json.dumps({"cluster": cluster, "task": {"type": job,
                                                                    "index": index}})
    return env


def tw_tool():
    build = pathlib.Path(os.environ.get("TW_BUILD_DIR", HERE.parents[1] / "build"))
    return str(build / "tools" / "tw")


def run_program(spec, corpus, scratch):
    """Runs one program as its spec says: "jobs" ([job, count] pairs, default 1 ps and 2
    workers), "wait" (the jobs, or single tasks as "job-index", that must finish, default
    the workers; the others are stopped afterwards), "chief" (the task whose output has the result), and with
    "server_processes" the cluster's servers as `tw server` processes (as TF's own server
    binary ran them) and the program once per waited-for task as their client."""
    work = scratch / spec["name"]
    shutil.copytree(corpus / spec["dir"], work)
    main = work / spec["file"]
    text, changed = rewrite(main.read_text(encoding="utf-8"))
    main.write_text(text, encoding="utf-8")
    if changed["import"] != 1:
        return False, "its TensorFlow import is not `import tensorflow as tf` on a line"
    jobs = spec.get("jobs", [["ps", 1], ["worker", 2]])
    ports = iter(spec.get("fixed_ports") or free_ports(sum(n for _, n in jobs)))
    cluster = {job: ["localhost:%d" % next(ports) for _ in range(n)] for job, n in jobs}
    values = {"%s_hosts" % job: ",".join(hosts) for job, hosts in cluster.items()}
    values.update(data_dir=str(work / "data"), train_dir=str(work / "train"))
    waited = spec.get("wait", ["worker"])

    def is_waited(job, index):
        return job in waited or "%s-%d" % (job, index) in waited
    processes, logs = [], []

    def start(argv, job, index, env, name):
        log = open(work / (name + ".log"), "w")
        logs.append(log)
        process = subprocess.Popen(argv, cwd=work, stdout=log, stderr=subprocess.STDOUT,
                                   env=env)
        processes.append((job, index, name, process))

    try:
        for job, count in jobs:
            for index in range(count):
                env = task_env(spec, cluster, job, index)
                args = [a.format(job=job, index=index,
                                 worker_grpc_url="grpc://" + cluster[job][index], **values)
                        for a in spec.get("args", [])]
                if spec.get("server_processes"):
                    env["TF_CONFIG"] = json.dumps({"cluster": cluster,
                                                   "task": {"type": job, "index": index}})
                    start([tw_tool(), "server"], "server", index, env,
                          "%s-%d-server" % (job, index))
                    if not is_waited(job, index):
                        continue
                    env.pop("TF_CONFIG")
                start([sys.executable, str(main)] + args, job, index, env,
                      "%s-%d" % (job, index))
        deadline = time.monotonic() + spec.get("timeout", 180)
        for job, index, name, process in processes:
            if not is_waited(job, index):
                continue
            try:
                code = process.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                return False, "%s did not finish in %ds" % (name, spec.get("timeout", 180))
            if code != 0:
                tail = (work / (name + ".log")).read_text(errors="replace")[-700:]
                return False, "%s exited %d: ...%s" % (name, code, tail.strip())
        chief = (work / (spec.get("chief", "worker-0") + ".log")).read_text(errors="replace")
        found = re.findall(spec["expect"], chief, flags=re.MULTILINE)
        if not found:
            return False, "the chief's output has no line matching %r" % spec["expect"]
        last = found[-1] if isinstance(found[-1], str) else " ".join(found[-1])
        return True, last.strip()
    finally:
        for _, _, _, process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        for log in logs:
            log.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=pathlib.Path, help="the folder holding the programs")
    parser.add_argument("names", nargs="*", help="run only these programs")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    options = parser.parse_args()
    specs = json.loads((HERE / "programs.json").read_text())["programs"]
    if options.names:
        specs = [s for s in specs if s["name"] in options.names]
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="tw_tf1_corpus."))
    failures = 0
    try:
        for spec in specs:
            if not (options.corpus / spec["dir"] / spec["file"]).is_file():
                print("%-24s MISSING  %s/%s" % (spec["name"], spec["dir"], spec["file"]))
                failures += 1
                continue
            start = time.monotonic()
            ok, detail = run_program(spec, options.corpus, scratch)
            failures += not ok
            print("%-24s %-7s %5.1fs  %s" % (spec["name"], "ok" if ok else "FAILED",
                                             time.monotonic() - start, detail), flush=True)
    finally:
        if options.keep:
            print("scratch folder kept:", scratch)
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    print("%d passed, %d failed" % (len(specs) - failures, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
