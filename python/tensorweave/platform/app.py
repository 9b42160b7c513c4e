"""TF 1.x's `tf.app`: `run` and `flags` (the same module as `tf.flags`).

    def main(argv):            # argv: the program name and what the flags left over
        ...
    if __name__ == "__main__":
        tf.app.run()

Contract of `run(main=None, argv=None)`, as TF 1.x's (absl.app.run with TF's tolerant
parser):

- `main` defaults to the `main` function of the `__main__` module; `argv` to `sys.argv`.
- `flags.FLAGS(argv, known_only=True)` parses the flags: unknown flags are not errors but
  stay, in order, in the list passed to `main` with the positional arguments.
- A flags error (a value that does not convert, a failed validator or required flag, a
  missing value) prints `FATAL Flags parsing error: <message>` and
  `Pass --helpshort or --helpfull to see help on flags.` to stderr and exits with status 1,
  as absl does.
- absl's help flags are defined on FLAGS (unless the program defined flags of those names):
  `--help` (`-?`) and `--helpshort` print the main module's docstring (`%s` replaced by the
  program's name) and its flags to stdout, `--helpfull` every flag; then exit with status
  1, as absl does.
- Then `sys.exit(main(argv_left))`: main's return value is the exit status (None is 0).
"""

import sys

from tensorweave.platform import flags

__all__ = ["run", "flags", "usage"]

_HELP_MODULE = "tensorweave.platform.app"


def usage(shorthelp=False, writeto_stdout=False, flag_values=None):
    """Writes the main module's docstring (or `USAGE: prog [flags]`) and the flags' help:
    those of the main module when `shorthelp`, else all."""
    flag_values = flags.FLAGS if flag_values is None else flag_values
    program = sys.argv[0] if sys.argv else ""
    doc = getattr(sys.modules.get("__main__"), "__doc__", None)
    if not doc:
        doc = "\nUSAGE: %s [flags]\n" % program
    else:
        specifiers = doc.count("%") - 2 * doc.count("%%")
        try:
            doc %= (program,) * specifiers
        except (OverflowError, TypeError, ValueError):
            pass
    text = flag_values.main_module_help() if shorthelp else flag_values.get_help()
    out = sys.stdout if writeto_stdout else sys.stderr
    out.write(doc)
    if text:
        out.write("\nflags:\n")
        out.write(text)
    out.write("\n")
    out.flush()


class _HelpFlag(flags.Flag):
    """A boolean flag that, when set, prints help and exits with status 1 (absl's)."""

    def __init__(self, name, short_name, help_text, shorthelp, hint):
        super().__init__(flags._BooleanParser(), name, False, help_text, short_name,
                         boolean=True, module_name=_HELP_MODULE)
        self._shorthelp = shorthelp
        self._hint = hint

    def parse(self, argument):
        if self._parse(argument):
            usage(shorthelp=self._shorthelp, writeto_stdout=True)
            if self._hint:
                print()
                print("Try --helpfull to get a list of all flags.")
            sys.exit(1)


def _define_help_flags(flag_values):
    definitions = [("help", "?", "show this help", True, True),
                   ("helpshort", None, "show usage only for this module", True, False),
                   ("helpfull", None, "show full help", False, False)]
    for name, short_name, help_text, shorthelp, hint in definitions:
        if name in flag_values or (short_name and short_name in flag_values):
            continue
        flag_values._register(_HelpFlag(name, short_name, help_text, shorthelp, hint))


def _parse_flags_tolerate_undef(argv):
    return flags.FLAGS(sys.argv if argv is None else argv, known_only=True)


def run(main=None, argv=None):
    """Parses the flags from `argv` (default sys.argv), known ones only, then exits with
    `main(remaining_argv)`'s return value. See the module's doc."""
    main = main or sys.modules["__main__"].main
    _define_help_flags(flags.FLAGS)
    try:
        args = _parse_flags_tolerate_undef(argv)
    except flags.Error as error:
        message = str(error)
        if "\n" in message:
            message = "\n" + "\n".join("  " + line for line in message.splitlines())
        sys.stderr.write("FATAL Flags parsing error: %s\n" % message)
        sys.stderr.write("Pass --helpshort or --helpfull to see help on flags.\n")
        sys.exit(1)
    sys.exit(main(args))
