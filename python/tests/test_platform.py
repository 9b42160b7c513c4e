"""tensorweave.platform: flags (tf.flags), app.run (tf.app.run) and tf_logging (tf.logging),
as TF 1.x behaves (absl.flags underneath)."""

import logging
import sys
import textwrap

import pytest

from conftest import run_python
from tensorweave.platform import app, flags, tf_logging


@pytest.fixture
def fv():
    return flags.FlagValues()


@pytest.fixture
def global_flags(monkeypatch):
    """A fresh global FLAGS, so DEFINE_* without flag_values and app.run use it."""
    fresh = flags.LazyFlagValues()
    monkeypatch.setattr(flags, "FLAGS", fresh)
    return fresh


def define_common(fv):
    flags.DEFINE_string("name", "anon", "A name.", flag_values=fv)
    flags.DEFINE_integer("steps", 10, "Steps.", flag_values=fv)
    flags.DEFINE_float("lr", 0.5, "Rate.", flag_values=fv)
    flags.DEFINE_boolean("fast", False, "Fast.", flag_values=fv)
    flags.DEFINE_bool("check", True, "Check.", flag_values=fv)
    flags.DEFINE_list("hosts", "a, b", "Hosts.", flag_values=fv)
    flags.DEFINE_enum("mode", "train", ["train", "eval"], "Mode.", flag_values=fv)


# ----------------------------------------------------------------------------- flags

def test_defaults(fv):
    define_common(fv)
    assert fv(["prog"]) == ["prog"]
    assert fv.flag_values_dict() == {"name": "anon", "steps": 10, "lr": 0.5, "fast": False,
                                     "check": True, "hosts": ["a", "b"], "mode": "train"}
    assert fv["steps"].default == 10 and fv["steps"].using_default_value


def test_value_forms(fv):
    define_common(fv)
    left = fv(["prog", "--name=x", "--steps", "7", "-lr=0.25", "--fast", "--nocheck",
               "--hosts=h1,h2", "-mode", "eval"])
    assert left == ["prog"]
    assert (fv.name, fv.steps, fv.lr, fv.fast, fv.check, fv.hosts, fv.mode) == (
        "x", 7, 0.25, True, False, ["h1", "h2"], "eval")
    assert fv["steps"].present == 1 and not fv["steps"].using_default_value


@pytest.mark.parametrize("arg,value", [("--fast=false", False), ("--fast=FALSE", False),
                                       ("--fast=0", False), ("--fast=f", False),
                                       ("--fast=true", True), ("--fast=1", True),
                                       ("--fast", True), ("--nofast", False)])
def test_boolean_spellings(fv, arg, value):
    flags.DEFINE_boolean("fast", not value, "Fast.", flag_values=fv)
    fv(["prog", arg])
    assert fv.fast is value


def test_boolean_does_not_take_the_next_argument(fv):
    flags.DEFINE_boolean("fast", False, "Fast.", flag_values=fv)
    assert fv(["prog", "--fast", "false"]) == ["prog", "false"]
    assert fv.fast is True


def test_last_value_wins_and_integers_in_hex_and_octal(fv):
    flags.DEFINE_integer("n", 0, "n", flag_values=fv)
    fv(["prog", "--n=1", "--n=0x1f"])
    assert fv.n == 31
    fv(["prog", "--n=0o17"])
    assert fv.n == 15


def test_short_names(fv):
    flags.DEFINE_integer("workers", 1, "Workers.", short_name="w", flag_values=fv)
    fv(["prog", "-w", "4"])
    assert fv.workers == 4
    fv(["prog", "--w=5"])
    assert fv.workers == 5


def test_known_only_leaves_unknown_flags_and_positionals_in_order(fv):
    define_common(fv)
    left = fv(["prog", "a", "--unknown=1", "--steps=3", "--other", "b", "--nofast", "c"],
              known_only=True)
    assert left == ["prog", "a", "--unknown=1", "--other", "b", "c"]
    assert fv.steps == 3 and fv.fast is False


def test_double_dash_ends_flags(fv):
    define_common(fv)
    assert fv(["prog", "--steps=2", "--", "--steps=9"]) == ["prog", "--steps=9"]
    assert fv.steps == 2
    assert fv(["prog", "--", "--steps=9"], known_only=True) == ["prog", "--", "--steps=9"]
    assert fv.steps == 2


def test_unknown_flag_raises_unless_known_only(fv):
    define_common(fv)
    with pytest.raises(flags.UnrecognizedFlagError, match="Unknown command line flag 'stepz'"
                       ". Did you mean: steps ?"):
        fv(["prog", "--stepz=3"])
    assert not fv.is_parsed()


def test_undefok(fv):
    define_common(fv)
    assert fv(["prog", "--undefok=gone,old", "--gone=1", "--noold", "x"]) == ["prog", "x"]


@pytest.mark.parametrize("define,arg,message", [
    ("DEFINE_integer", "--x=abc", r"flag --x=abc: invalid literal for int\(\) with base 10"),
    ("DEFINE_integer", "--x=1.5", r"flag --x=1.5: invalid literal"),
    ("DEFINE_float", "--x=abc", r"flag --x=abc: could not convert string to float: 'abc'"),
    ("DEFINE_boolean", "--x=maybe", r"flag --x=maybe: Non-boolean argument"),
])
def test_bad_value_names_the_flag(fv, define, arg, message):
    getattr(flags, define)("x", 1 if define != "DEFINE_boolean" else False, "X.",
                           flag_values=fv)
    with pytest.raises(flags.IllegalFlagValueError, match=message):
        fv(["prog", arg])


def test_bad_enum_value(fv):
    define_common(fv)
    with pytest.raises(flags.IllegalFlagValueError,
                       match=r"flag --mode=test: value should be one of <train\|eval>"):
        fv(["prog", "--mode=test"])


def test_enum_case_insensitive(fv):
    flags.DEFINE_enum("mode", "train", ["train", "eval"], "Mode.", case_sensitive=False,
                      flag_values=fv)
    fv(["prog", "--mode=EVAL"])
    assert fv.mode == "eval"


def test_bounds(fv):
    flags.DEFINE_integer("n", 1, "n", lower_bound=1, upper_bound=8, flag_values=fv)
    flags.DEFINE_float("p", 0.0, "p", lower_bound=0, flag_values=fv)
    with pytest.raises(flags.IllegalFlagValueError,
                       match=r"flag --n=9: 9 is not an integer in the range \[1, 8\]"):
        fv(["prog", "--n=9"])
    with pytest.raises(flags.IllegalFlagValueError, match="is not a non-negative number"):
        fv(["prog", "--p=-0.5"])


def test_missing_value(fv):
    define_common(fv)
    with pytest.raises(flags.Error, match="Missing value for flag --steps"):
        fv(["prog", "--steps"])


def test_bad_default_is_rejected_at_definition(fv):
    with pytest.raises(flags.IllegalFlagValueError, match="flag --n=ten"):
        flags.DEFINE_integer("n", "ten", "n", flag_values=fv)
    assert "n" not in fv


def test_defining_twice_names_the_flag(fv):
    flags.DEFINE_string("dup", "a", "First.", flag_values=fv)
    with pytest.raises(flags.DuplicateFlagError,
                       match="The flag 'dup' is defined twice.*Description from first "
                             "occurrence: First."):
        flags.DEFINE_integer("dup", 1, "Second.", flag_values=fv)
    assert fv["dup"].help == "First."


def test_plain_flag_values_refuse_reads_before_parsing(fv):
    flags.DEFINE_integer("n", 1, "n", flag_values=fv)
    with pytest.raises(flags.UnparsedFlagAccessError,
                       match="Trying to access flag --n before flags were parsed."):
        fv.n
    with pytest.raises(AttributeError):
        fv.no_such_flag


def test_lazy_flag_values_parse_sys_argv_known_only_on_first_read(monkeypatch):
    lazy = flags.LazyFlagValues()
    flags.DEFINE_integer("n", 1, "n", flag_values=lazy)
    monkeypatch.setattr(sys, "argv", ["prog", "--n=5", "--not_ours=1", "pos"])
    assert not lazy.is_parsed()
    assert lazy.n == 5
    assert lazy.is_parsed()
    monkeypatch.setattr(sys, "argv", ["prog", "--n=6"])
    assert lazy.n == 5  # parsed once only


def test_lazy_flag_values_raise_the_parse_error(monkeypatch):
    lazy = flags.LazyFlagValues()
    flags.DEFINE_integer("n", 1, "n", flag_values=lazy)
    monkeypatch.setattr(sys, "argv", ["prog", "--n=x"])
    with pytest.raises(flags.IllegalFlagValueError, match="flag --n=x"):
        lazy.n


def test_global_flags_and_holders(global_flags, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["prog", "--depth=3"])
    holder = flags.DEFINE_integer("depth", 1, "Depth.")
    assert "depth" in flags.FLAGS
    assert holder.name == "depth" and holder.default == 1
    assert holder.value == 3 and holder.present


def test_old_keyword_names(fv):
    flags.DEFINE_string(flag_name="old", default_value="v", docstring="Old style.",
                        flag_values=fv)
    fv(["prog"])
    assert fv.old == "v" and fv["old"].help == "Old style."


def test_assignment_validators_and_required(fv):
    flags.DEFINE_integer("n", 2, "n", flag_values=fv)
    flags.DEFINE_string("out", None, "Output.", required=True, flag_values=fv)
    flags.register_validator("n", lambda v: v % 2 == 0, "must be even", flag_values=fv)
    with pytest.raises(flags.IllegalFlagValueError,
                       match="flag --out=None: Flag --out must have a value other than None."):
        fv(["prog"])
    fv(["prog", "--out=o"])
    with pytest.raises(flags.IllegalFlagValueError, match="flag --n=3: must be even"):
        fv(["prog", "--out=o", "--n=3"])
    fv.n = 4
    assert fv.n == 4 and not fv["n"].using_default_value
    with pytest.raises(flags.UnrecognizedFlagError):
        fv.nope = 1


def test_unparse_delete_and_iterate(fv):
    define_common(fv)
    fv(["prog", "--steps=3"])
    assert sorted(fv) == sorted(["name", "steps", "lr", "fast", "check", "hosts", "mode"])
    assert len(fv) == 7
    fv.unparse_flags()
    assert not fv.is_parsed() and fv["steps"].value == 10
    del fv.steps
    assert "steps" not in fv
    flags.DEFINE_integer("steps", 20, "Redefined.", flag_values=fv)  # allowed once deleted
    assert fv.get_flag_value("steps", None) == 20
    assert fv.get_flag_value("absent", "d") == "d"


def test_list_parsing(fv):
    flags.DEFINE_list("xs", [], "xs", flag_values=fv)
    fv(["prog", '--xs=a,"b,c", d'])
    assert fv.xs == ["a", "b,c", "d"]
    fv(["prog", "--xs="])
    assert fv.xs == []


def test_argv_must_be_a_list_with_the_program_name(fv):
    with pytest.raises(TypeError):
        fv("prog --x")
    with pytest.raises(ValueError):
        fv([])


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


def test_run_reports_a_bad_value_and_exits_1(global_flags, capsys):
    flags.DEFINE_integer("steps", 1, "Steps.")
    with pytest.raises(SystemExit) as exit_info:
        app.run(lambda argv: 0, ["prog", "--steps=abc"])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("FATAL Flags parsing error: flag --steps=abc: ")
    assert "Pass --helpshort or --helpfull to see help on flags." in err


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


def test_program_bad_integer(program):
    out = run_python([program, "--steps=abc"])
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr == ("FATAL Flags parsing error: flag --steps=abc: invalid literal for "
                          "int() with base 10: 'abc'\n"
                          "Pass --helpshort or --helpfull to see help on flags.\n")


def test_program_help(program):
    out = run_python([program, "--help"])
    assert out.returncode == 1  # as absl
    assert out.stdout.startswith("Trains for a while. Usage: %s [flags] FILE" % program)
    assert "  --steps: Training steps.\n    (default: '100')\n    (an integer)" in out.stdout
    assert "  --[no]verbose: Talk." in out.stdout
    assert "--helpfull" in out.stdout
    full = run_python([program, "--helpfull"])
    assert full.returncode == 1 and "show full help" in full.stdout


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
