"""`tw top` in a real terminal: tmux runs it against a training cluster that `tw launch`
runs, the pane is read back while it refreshes, and q (or Ctrl-C) ends it. Skipped,
saying why, where tmux or the Fashion-MNIST data is missing (scripts/setup.sh installs
both)."""

import os
import re
import shutil
import subprocess
import time

import pytest

from conftest import launched_training

@pytest.fixture
def cluster(tw_tool):
    """A training cluster under tw launch: its tasks' metrics addresses."""
    with launched_training(tw_tool) as endpoints:
        yield list(endpoints.values())


@pytest.fixture
def tmux():
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (scripts/setup.sh installs it)")
    name = "twtop%d" % os.getpid()
    # A server of its own (-L), so the test never touches a user's tmux sessions.
    base = ["tmux", "-L", name]
    yield base, name
    subprocess.run(base + ["kill-server"], capture_output=True)


def pane(base, name):
    return subprocess.run(base + ["capture-pane", "-p", "-t", name], capture_output=True,
                          text=True).stdout


def running(base, name):
    return subprocess.run(base + ["has-session", "-t", name], capture_output=True).returncode == 0


def wait_for(predicate, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def number(text):
    """A column's value; '-' (no rates yet) is 0."""
    return 0.0 if text == "-" else float(text)


def rows(text):
    """{task: [columns]} of the table on screen."""
    table = {}
    for line in text.splitlines():
        fields = line.split()
        if fields and re.fullmatch(r"(ps|worker):\d+", fields[0]):
            table[fields[0]] = fields
    return table


@pytest.mark.parametrize("key", ["q", "C-c"])
def test_top_shows_every_task_live_and_quits(tw_tool, cluster, tmux, key):
    base, name = tmux
    subprocess.run(base + ["new-session", "-d", "-s", name, "-x", "160", "-y", "20",
                           " ".join([tw_tool, "top", "--interval", "0.5"] + cluster)], check=True)
    # Every task has a row, and its rates are there once two scrapes of it have been made
    # (each task's own two: the ps's may come a refresh after the workers').
    def trained():
        table = rows(pane(base, name))
        return (set(table) == {"ps:0", "worker:0", "worker:1"} and
                all(number(table[w][2]) > 0 for w in ("worker:0", "worker:1")) and
                number(table["ps:0"][4]) > 0)
    assert wait_for(trained), pane(base, name)
    screen = pane(base, name)
    assert "tw top: 3 of 3 tasks answering" in screen, screen
    table = rows(screen)
    assert number(table["ps:0"][4]) > 0, screen  # the ps serves RPCs
    assert number(table["ps:0"][10]) > 1, screen  # and holds the model's variables (MB)
    # It refreshes in place: the first line stays the header, the steps move on.
    first = number(table["worker:0"][2])
    assert wait_for(lambda: number(rows(pane(base, name)).get("worker:0", ["", "", "-"])[2])
                    not in (first, 0.0)), pane(base, name)
    assert pane(base, name).splitlines()[0].startswith("tw top:")
    subprocess.run(base + ["send-keys", "-t", name, key], check=True)
    assert wait_for(lambda: not running(base, name), timeout=5), "tw top did not quit on " + key


def test_top_once_prints_a_table_and_fails_when_a_task_is_down(tw_tool, cluster):
    done = subprocess.run([tw_tool, "top", "--once", "--interval", "0.5"] + cluster,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert set(rows(done.stdout)) == {"ps:0", "worker:0", "worker:1"}, done.stdout
    # A task nobody serves: shown as down, and the exit code says so.
    with __import__("socket").socket() as s:
        s.bind(("127.0.0.1", 0))
        nobody = "127.0.0.1:%d" % s.getsockname()[1]
    done = subprocess.run([tw_tool, "top", "--once", "--interval", "0.2", cluster[0], nobody],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1, done.stdout
    assert re.search(re.escape(nobody) + r"\s+down: ", done.stdout), done.stdout
    bad = subprocess.run([tw_tool, "top", "--once", "no-port"], capture_output=True, text=True,
                         timeout=30)
    assert bad.returncode == 1 and "is not a metrics address" in bad.stderr, bad.stderr
