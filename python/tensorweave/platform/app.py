"""TF 1.x's `tf.app`: `run` and `flags` (the same module as `tf.flags`).

    def main(argv):            # argv: the program name and what the flags left over
        ...
    if __name__ == "__main__":
        tf.app.run()

`run(main=None, argv=None)` is absl's app.run with TF 1.x's tolerant parser: `main`
defaults to the `__main__` module's `main`, `argv` to `sys.argv`; flags are parsed known
only, so unknown flags stay, in order, in the list passed to `main`; a flags error prints
absl's message and exits with status 1 (TF's own tolerant parser let it escape as a
traceback); `--help`, `--helpshort`, `--helpfull` are absl's; then
`sys.exit(main(argv_left))`."""

import sys

from absl.app import run as _absl_run
from absl.app import usage  # noqa: F401 - TF's tf.app re-exports it

from tensorweave.platform import flags

__all__ = ["run", "flags", "usage"]


def _parse_flags_tolerate_undef(argv):
    try:
        return flags.FLAGS(sys.argv if argv is None else argv, known_only=True)
    except flags.Error as error:  # as absl's parse_flags_with_usage reports it
        sys.stderr.write("FATAL Flags parsing error: %s\n" % error)
        sys.stderr.write("Pass --helpshort or --helpfull to see help on flags.\n")
        sys.exit(1)


def run(main=None, argv=None):
    main = main or sys.modules["__main__"].main
    _absl_run(main=main, argv=argv, flags_parser=_parse_flags_tolerate_undef)
