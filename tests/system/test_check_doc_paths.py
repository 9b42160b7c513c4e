"""scripts/check_doc_paths.py (run by `make format-check`) on a small tree of its own: which
words it takes for repository paths, and that it names each missing one with its line."""

import subprocess
import sys

from conftest import ROOT

CHECKER = ROOT / "scripts" / "check_doc_paths.py"

DOC = """\
Real: `src/rpc/task_port.h`, (tools/k8s/), tools/k8s/k8s_manifest.{h,cc}, src/ops/*_ops.cc,
src/ops/<family>_ops.cc, src/rpc/task_port.h:12, docs/a.md#layout, the program examples/hello.
Not paths: build/tools/tw, /tmp/src/x.cc, https://example.com/src/x.cc, $P/include/x.h,
src/..., 3,000 examples/s, kubeflow/training-operator : examples/v1/dist_mnist.py.
Missing: src/rpc/gone.h and tools/k8s/k8s_manifest.{h,md}.
"""


def run_checker(root):
    return subprocess.run([sys.executable, str(CHECKER), str(root)], capture_output=True,
                          text=True, timeout=30)


def make_tree(root, doc):
    for path in ["src/rpc/task_port.h", "src/ops/array_ops.cc", "tools/k8s/k8s_manifest.h",
                 "tools/k8s/k8s_manifest.cc", "examples/hello.cc"]:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("")
    (root / "docs").mkdir()
    (root / "docs" / "a.md").write_text(doc)
    (root / "README.md").write_text("See docs/a.md.\n")


def test_names_each_missing_path_with_its_line_and_nothing_else(tmp_path):
    make_tree(tmp_path, DOC)
    done = run_checker(tmp_path)
    assert done.returncode == 1, done.stdout
    assert done.stdout.splitlines()[1:] == [
        "  docs/a.md:5: src/rpc/gone.h",
        "  docs/a.md:5: tools/k8s/k8s_manifest.{h,md} (tools/k8s/k8s_manifest.md)",
    ], done.stdout


def test_a_tree_whose_paths_all_exist_passes(tmp_path):
    make_tree(tmp_path, DOC.split("Missing:")[0])
    done = run_checker(tmp_path)
    assert done.returncode == 0 and done.stdout == "doc paths: ok\n", done.stdout

