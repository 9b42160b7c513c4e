"""The exactly-once word count (examples/wordcount.cc) with a task killed by SIGKILL.

Each run launches the C++ word count under `tw launch` and kills one task at a chosen
moment. Counting is fast (gigabytes a second from the page cache), so the moments are made
exact with a gate: one input is a named pipe (FIFO) that this test writes only when told
to. The map that opens it stops in the middle of its batch, holding files it has counted
or taken but not yet written into the ledger; the test kills a task then, and opens the
gate afterwards (again for every map that opens it, as a restarted count needs). The moments:
before the map's first count reaches the ledger (the gate is the first file of the list, so
the first of a map's first batch), in the middle of a batch (the gate is in the middle of
the list), and during the shutdown (when reduce reports the count done; the victim may be
stopped by then, which the job must survive as well).

With a restart policy the total must be exact and the recovery visible in reduce's output;
without one the job must fail, naming the task, and print no total. A task killed once the
count is over (its total printed, the cluster stopped) and restarted after its peers are gone
must say which peer it did not reach and why, and exit 0 within a bound, so that a job whose
every task must exit 0 succeeds.
"""

import json
import os
import pathlib
import re
import signal
import subprocess
import threading
import time

import pytest

from conftest import BUILD
from wordcount_corpus import FILES, GATE_TEXT, make_corpus

WORDCOUNT = BUILD / "examples" / "wordcount"


def task_pid(launcher_pid, job, index):
    """The pid of task job:index among the launcher's children (its TF_CONFIG says which)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = pathlib.Path("/proc", entry, "stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) != launcher_pid:
                continue
            environ = pathlib.Path("/proc", entry, "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        for variable in environ:
            if variable.startswith(b"TF_CONFIG="):
                task = json.loads(variable[len(b"TF_CONFIG="):])["task"]
                if task["type"] == job and task["index"] == index:
                    return int(entry)
    return None


class Run:
    """One `tw launch` of the word count, and what it printed."""

    def __init__(self, returncode, lines, killed):
        self.returncode = returncode
        self.lines = lines
        self.killed = killed
        self.text = "\n".join(lines)

    def reduce_lines(self):
        return [l[len("[reduce:0] "):] for l in self.lines if l.startswith("[reduce:0] ")]

    def summary(self, task):
        return [l for l in self.lines if l.startswith("tw launch:   %s " % task)]


SHUTDOWN = r"^\[reduce:0\] counted \d+ bytes"


def launch_and_kill(tw_tool, tmp_path, victim, moment, restart="exit-code", timeout=60,
                    after_kill=None):
    """Runs the word count on a corpus with a gate and kills `victim` with SIGKILL.

    victim: "files:0", "reduce:0", or "gate" for the map task that took the gate.
    moment: "first" or "middle" (the gate's place in the list; the kill comes while a map
    waits at it), or SHUTDOWN (the kill comes when reduce reports the count done).
    after_kill(list_file), if given, runs right after the kill (before the restart)."""
    list_file, gate, total = make_corpus(tmp_path, 0 if moment == "first" else FILES // 2)
    if moment == SHUTDOWN:
        gate.opened.set()
    process = subprocess.Popen(
        [tw_tool, "launch", "--cluster", "files=1,reduce=1,map=2", "--restart", restart,
         "--restart-delay", "0.2", "--success", "reduce:0", "--", str(WORDCOUNT), list_file],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=dict(os.environ, NO_COLOR="1"))
    lines, killed = [], []

    def kill(pid):
        if pid is None:
            return
        try:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except ProcessLookupError:  # it exited just now (stopped by the cluster)
            pass

    def read():
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            if moment == SHUTDOWN and not killed and re.search(SHUTDOWN, lines[-1]):
                job, index = victim.split(":")
                kill(task_pid(process.pid, job, int(index)))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        if moment != SHUTDOWN:
            assert gate.first_reader.wait(timeout), "no map opened the gate"
            if victim == "gate":
                kill(gate.reader_pid)
            else:
                job, index = victim.split(":")
                kill(task_pid(process.pid, job, int(index)))
            if after_kill is not None:
                after_kill(list_file)
            if victim == "files:0" and restart != "never":
                # Closed until reduce has seen the files task restart. The map at the gate
                # still owes its batch, so the round cannot end before reduce looks again,
                # and the recovery is exercised even when the other map had already taken
                # every name left in the queue (then nothing was lost, but reduce cannot
                # know that until it looks).
                deadline = time.monotonic() + timeout
                while (not any(re.search(FILES_RESTARTED, l) for l in list(lines))
                       and process.poll() is None and time.monotonic() < deadline):
                    time.sleep(0.02)
            gate.opened.set()
        returncode = process.wait(timeout=timeout)
    except (subprocess.TimeoutExpired, AssertionError) as e:
        process.kill()
        process.wait()
        reader.join()
        gate.close()
        pytest.fail("%s:\n%s" % (e, "\n".join(lines)))
    reader.join()
    gate.close()
    return Run(returncode, lines, killed), total


@pytest.fixture
def wordcount():
    if not WORDCOUNT.exists():
        pytest.skip("examples/wordcount is not built (%s)" % WORDCOUNT)


# What reduce says when it recovers: lost files handed out again, a new round after the
# files task's restart, a second start of a restarted reduce.
HANDED_OUT_AGAIN = r"round 2: handing out \d+ files? not counted yet"
FILES_RESTARTED = r"the files task restarted"
REDUCE_STARTED_TWICE = r"(?s)all 2 map tasks ready.*all 2 map tasks ready"


@pytest.mark.parametrize("victim,moment,sign", [
    ("gate", "first", HANDED_OUT_AGAIN),
    ("gate", "middle", HANDED_OUT_AGAIN),
    ("map:1", SHUTDOWN, None),
    ("files:0", "first", FILES_RESTARTED),
    ("files:0", "middle", FILES_RESTARTED),
    ("files:0", SHUTDOWN, None),
    ("reduce:0", "first", REDUCE_STARTED_TWICE),
    ("reduce:0", "middle", REDUCE_STARTED_TWICE),
])
def test_a_killed_task_restarts_and_the_total_is_exact(tw_tool, wordcount, tmp_path, victim,
                                                       moment, sign):
    run, total = launch_and_kill(tw_tool, tmp_path, victim, moment)
    # During the shutdown the victim may have been stopped already, which is fine too.
    assert run.killed or (moment == SHUTDOWN and "exited 0" in "".join(run.summary(victim))), \
        "nothing was killed:\n" + run.text
    assert run.returncode == 0, run.text
    # Exactly one total, and the right one (its line may come before a warning on stderr).
    totals = [l for l in run.reduce_lines() if l.startswith("final total")]
    assert totals == ["final total: %d" % total], run.text
    if moment != SHUTDOWN:
        # Survived, not missed: the victim was restarted, and what was lost was recovered.
        # (Killed during the shutdown, it may be restarted or not: the job was done.)
        restarted = [t for t in ("files:0", "reduce:0", "map:0", "map:1")
                     if "restarted 1 time" in "".join(run.summary(t))]
        assert len(restarted) == 1, run.text
        assert restarted[0] in (("map:0", "map:1") if victim == "gate" else (victim,)), run.text
        assert re.search(sign, "\n".join(run.reduce_lines())), run.text


def test_on_failure_restarts_a_killed_map_too(tw_tool, wordcount, tmp_path):
    run, total = launch_and_kill(tw_tool, tmp_path, "gate", "middle", restart="on-failure")
    assert run.killed and run.returncode == 0, run.text
    assert [l for l in run.reduce_lines() if l.startswith("final total")] == [
        "final total: %d" % total], run.text


@pytest.mark.parametrize("victim", ["gate", "files:0", "reduce:0"])
def test_without_a_restart_the_job_fails_naming_the_task(tw_tool, wordcount, tmp_path, victim):
    run, _ = launch_and_kill(tw_tool, tmp_path, victim, "middle", restart="never")
    assert run.killed, "nothing was killed:\n" + run.text
    assert run.returncode == 128 + signal.SIGKILL, run.text
    assert not any("final total" in l for l in run.lines), run.text
    name = r"map:\d" if victim == "gate" else victim
    assert re.match(r"tw launch: job failed: %s killed by SIGKILL" % name, run.lines[-1]), run.text


def test_an_empty_list_counts_nothing_and_ends(tw_tool, wordcount, tmp_path):
    # Nothing to hand out: reduce must not wait for check-ins or rounds.
    empty = tmp_path / "list"
    empty.write_text("")
    out = subprocess.run(
        [tw_tool, "launch", "--cluster", "files=1,reduce=1,map=2", "--success", "reduce:0",
         "--", str(WORDCOUNT), str(empty)],
        capture_output=True, text=True, timeout=60, env=dict(os.environ, NO_COLOR="1"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "[reduce:0] final total: 0" in out.stdout


def test_a_files_task_restarted_with_another_list_fails_the_job(tw_tool, wordcount, tmp_path):
    # The ledger names files by their place in the list: a restarted files task that reads
    # another list would make it count other files. reduce refuses, and prints no total.
    def drop_last_line(list_file):
        lines = pathlib.Path(list_file).read_text().splitlines()
        pathlib.Path(list_file).write_text("\n".join(lines[:-1]) + "\n")

    run, _ = launch_and_kill(tw_tool, tmp_path, "files:0", "middle", after_kill=drop_last_line)
    assert run.killed, run.text
    assert run.returncode == 1, run.text
    assert "the files task restarted with another LIST_FILE (40 files, 41 before)" in run.text
    assert not any("final total" in l for l in run.lines), run.text


# Runs the word count as every task, and kills one task with SIGKILL once its count is over
# (the total printed, the cluster stopped): a task killed as the count ends, every time.
# The launcher then restarts it after its peers have gone for good.
KILLED_AFTER_THE_END = r'''
task=$(printf '%s' "$TF_CONFIG" | sed -n 's/.*"task":{"type":"\([a-z]*\)","index":\([0-9]*\)}.*/\1:\2/p')
"$WORDCOUNT" "$@" || exit $?
if [ "$task" = "$VICTIM" ] && [ "$TW_RESTART_COUNT" = 0 ]; then kill -KILL $$; fi
'''

RESTARTED_WAIT = 10  # seconds: kRestartedWait, examples/wordcount_state.h


@pytest.mark.parametrize("victim,peer", [
    ("map:1", "reduce:0"), ("files:0", "reduce:0"), ("reduce:0", "files:0")])
def test_a_task_restarted_after_the_end_says_so_and_the_job_succeeds(tw_tool, wordcount, tmp_path,
                                                                     victim, peer):
    # No --success: the job succeeds only when every task has exited 0, the restarted one too.
    # No gate: the kill needs no moment inside the count.
    list_file, gate, total = make_corpus(tmp_path, 0)
    gate.close()
    paths = pathlib.Path(list_file).read_text().splitlines()
    pathlib.Path(list_file).write_text("\n".join(p for p in paths if p != gate.path) + "\n")
    total -= len(GATE_TEXT.split())
    start = time.monotonic()
    out = subprocess.run(
        [tw_tool, "launch", "--cluster", "files=1,reduce=1,map=2", "--restart", "exit-code",
         "--restart-delay", "0.2", "--", "/bin/sh", "-c", KILLED_AFTER_THE_END, "wordcount",
         list_file],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60,
        env=dict(os.environ, NO_COLOR="1", WORDCOUNT=str(WORDCOUNT), VICTIM=victim))
    elapsed = time.monotonic() - start
    assert out.returncode == 0, out.stdout
    lines = out.stdout.splitlines()
    assert [l for l in lines if "final total" in l] == ["[reduce:0] final total: %d" % total], \
        out.stdout
    assert "tw launch: %s killed by SIGKILL (exit code 137); restarting it" % victim in out.stdout
    summary = [l for l in lines if l.startswith("tw launch:   %s " % victim)]
    assert summary and summary[0].endswith("exited 0, restarted 1 time"), out.stdout
    # Which peer, and why, within the bound.
    said = [l for l in lines if l.startswith("[%s] %s: restarted (restart 1)" % (victim, victim))]
    assert len(said) == 1, out.stdout
    assert re.search(r"and %s has not answered for %ds \(CreateSession gave up after %ds waiting "
                     r"for /job:%s/replica:0/task:0\): the count ended without this task"
                     % (peer, RESTARTED_WAIT, RESTARTED_WAIT, peer.split(":")[0]), said[0]), \
        said[0]
    assert said[0].endswith("; exiting 0"), said[0]
    assert elapsed < RESTARTED_WAIT + 30, out.stdout
    assert lines[-1] == "tw launch: job succeeded: %s exited 0" % victim, out.stdout
