"""tensorweave.platform: flags (tf.flags) and app.run (tf.app.run), absl's as TF 1.x wraps
them, and tf_logging (tf.logging)."""

import logging
import sys
import textwrap

import pytest
from absl import flags as absl_flags

from conftest import run_python
from tensorweave.platform import app, flags, tf_logging


@pytest.fixture
def global_flags():
    """absl's global FlagValues under FLAGS, unparsed, with the flags a test defines removed
    afterwards."""
    fv = absl_flags.FLAGS
    before = set(fv)
    fv.unparse_flags()
    yield fv
    fv.unparse_flags()
    for name in set(fv) - before:
        delattr(fv, name)


# ----------------------------------------------------------------------------- flags
# The flags are absl's (Debian's python3-absl); these tests check what TF 1.x adds.

def test_flags_are_absls():
    assert flags.FlagValues is absl_flags.FlagValues
    assert flags.IllegalFlagValueError is absl_flags.IllegalFlagValueError


def test_flags_parse_sys_argv_known_only_on_first_read(global_flags, monkeypatch):
    flags.DEFINE_integer("n", 1, "n")
    monkeypatch.setattr(sys, "argv", ["prog", "--n=5", "--not_ours=1", "pos"])
    assert not global_flags.is_parsed()
    assert flags.FLAGS.n == 5  # absl's FlagValues would raise UnparsedFlagAccessError
    assert global_flags.is_parsed()
    monkeypatch.setattr(sys, "argv", ["prog", "--n=6"])
    assert flags.FLAGS.n == 5  # parsed once only
    assert "n" in flags.FLAGS and len(flags.FLAGS) >= 1


def test_old_keyword_names(global_flags, caplog):
    flags.DEFINE_string(flag_name="old", default_value="v", docstring="Old style.")
    assert "deprecated" in caplog.text
    global_flags(["prog"])
    assert global_flags.old == "v" and global_flags["old"].help == "Old style."


# ----------------------------------------------------------------------------- app.run

def test_run_passes_unknown_flags_and_exits_with_mains_value(global_flags):
    flags.DEFINE_integer("steps", 1, "Steps.")
    seen = []

    def main(argv):
        seen.append((argv, flags.FLAGS.steps))
        return 4

    with pytest.raises(SystemExit) as exit_info:
        app.run(main, ["prog", "--steps=8", "--extra=1", "pos"])
    assert exit_info.value.code == 4
    assert seen == [(["prog", "--extra=1", "pos"], 8)]


def test_run_parses_sys_argv_by_default(global_flags, monkeypatch):
    flags.DEFINE_string("who", "nobody", "Who.")
    monkeypatch.setattr(sys, "argv", ["prog", "--who=me"])
    with pytest.raises(SystemExit) as exit_info:
        app.run(lambda argv: None)
    assert exit_info.value.code is None
    assert flags.FLAGS.who == "me"


PROGRAM = '''\
"""Trains for a while. Usage: %s [flags] FILE"""
from tensorweave.platform import app, flags

flags.DEFINE_integer("steps", 100, "Training steps.")
flags.DEFINE_boolean("verbose", False, "Talk.")
FLAGS = flags.FLAGS


def main(argv):
    print("argv=%r steps=%d verbose=%s" % (argv[1:], FLAGS.steps, FLAGS.verbose))
    return int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 0


if __name__ == "__main__":
    app.run()
'''


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(PROGRAM)
    return str(path)


def test_program_run(program):
    out = run_python([program, "7", "--steps", "5", "--unknown=x", "--verbose"])
    assert out.returncode == 7, out.stderr
    assert out.stdout == "argv=['7', '--unknown=x'] steps=5 verbose=True\n"


def test_program_bad_integer_is_one_message_and_exit_1(program):
    out = run_python([program, "--steps=abc"])
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr == ("FATAL Flags parsing error: flag --steps=abc: invalid literal for "
                          "int() with base 10: 'abc'\n"
                          "Pass --helpshort or --helpfull to see help on flags.\n")


def test_program_help_is_absls(program):
    out = run_python([program, "--helpfull"])
    assert out.returncode in (0, 1), out.stderr  # absl's exit status for help
    assert "Trains for a while. Usage: %s [flags] FILE" % program in out.stdout
    assert "--steps: Training steps." in out.stdout
    assert "--[no]verbose: Talk." in out.stdout


def test_program_reading_flags_without_app_run(tmp_path):
    path = tmp_path / "lazy.py"
    path.write_text(textwrap.dedent("""\
        import sys
        from tensorweave.platform import flags
        flags.DEFINE_float("lr", 0.1, "Rate.")
        print(flags.FLAGS.lr, sys.argv[1:])
        """))
    out = run_python([str(path), "--lr=0.25", "--other", "x"])
    assert out.returncode == 0, out.stderr
    assert out.stdout == "0.25 ['--lr=0.25', '--other', 'x']\n"


# ----------------------------------------------------------------------------- tf_logging

@pytest.fixture
def tf_logger():
    logger = tf_logging.get_logger()
    level = logger.level
    yield logger
    logger.setLevel(level)


def test_levels_are_tfs():
    assert (tf_logging.DEBUG, tf_logging.INFO, tf_logging.WARN, tf_logging.WARNING,
            tf_logging.ERROR, tf_logging.FATAL) == (10, 20, 30, 30, 40, 50)


def test_logger_is_named_tensorflow(tf_logger):
    assert tf_logger is logging.getLogger("tensorflow")


def test_set_and_get_verbosity(tf_logger, caplog):
    caplog.set_level(logging.DEBUG)
    tf_logging.set_verbosity(tf_logging.ERROR)
    assert tf_logging.get_verbosity() == tf_logging.ERROR
    tf_logging.warning("hidden")
    tf_logging.error("shown %d", 1)
    tf_logging.set_verbosity(tf_logging.DEBUG)
    tf_logging.debug("debug %s", "too")
    tf_logging.info("info")
    tf_logging.warn("warn")
    tf_logging.fatal("fatal, and still running")
    tf_logging.log(tf_logging.INFO, "logged")
    tf_logging.vlog(tf_logging.INFO, "vlogged")
    records = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    assert records == [("tensorflow", 40, "shown 1"), ("tensorflow", 10, "debug too"),
                       ("tensorflow", 20, "info"), ("tensorflow", 30, "warn"),
                       ("tensorflow", 50, "fatal, and still running"),
                       ("tensorflow", 20, "logged"), ("tensorflow", 20, "vlogged")]
    assert all(r.filename == "test_platform.py" for r in caplog.records)
    assert caplog.records[0].funcName == "test_set_and_get_verbosity"


def test_log_every_n_and_first_n(tf_logger, caplog):
    caplog.set_level(logging.INFO)
    tf_logging.set_verbosity(tf_logging.INFO)
    for i in range(7):
        tf_logging.log_every_n(tf_logging.INFO, "every %d", 3, i)
    for i in range(5):
        tf_logging.log_first_n(tf_logging.INFO, "first %d", 2, i)
    for i in range(3):  # another line: its own count
        tf_logging.log_first_n(tf_logging.INFO, "other %d", 1, i)
    tf_logging.log_if(tf_logging.INFO, "if %s", False, "no")
    tf_logging.log_if(tf_logging.INFO, "if %s", True, "yes")
    assert [r.getMessage() for r in caplog.records] == [
        "every 0", "every 3", "every 6", "first 0", "first 1", "other 0", "if yes"]


def test_default_verbosity_is_warn_on_stderr():
    out = run_python(["-c", textwrap.dedent("""\
        from tensorweave.platform import tf_logging as logging
        print(logging.get_verbosity())
        logging.info("not shown")
        logging.warning("careful %s", "now")
        logging.error("broken")
        """)])
    assert out.returncode == 0, out.stderr
    assert out.stdout == "30\n"
    assert out.stderr == "WARNING:tensorflow:careful now\nERROR:tensorflow:broken\n"


def test_no_second_handler_when_the_program_configured_logging():
    out = run_python(["-c", textwrap.dedent("""\
        import logging, sys
        logging.basicConfig(stream=sys.stdout, format="root %(name)s %(message)s")
        from tensorweave.platform import tf_logging
        tf_logging.warning("once")
        """)])
    assert out.returncode == 0, out.stderr
    assert out.stdout == "root tensorflow once\n" and out.stderr == ""
