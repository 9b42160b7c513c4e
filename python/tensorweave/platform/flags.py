"""TF 1.x's command-line flags (`tf.flags`, `tf.app.flags`): absl.flags' behaviour, without absl.

    flags = tf.app.flags
    flags.DEFINE_integer("steps", 100, "Training steps.")
    FLAGS = flags.FLAGS
    ...
    print(FLAGS.steps)      # parses sys.argv (known flags only) on this first read

Contracts, as absl.flags under TF 1.x:

- `DEFINE_*(name, default, help, flag_values=FLAGS, required=False, short_name=None)` define
  a flag on `flag_values` (the global `FLAGS` unless given) and return a `FlagHolder`. The
  default is parsed as a command-line value would be, so a bad default raises
  `IllegalFlagValueError`. TF 1.x's old keyword names `flag_name`, `default_value` and
  `docstring` are accepted (with TF's deprecation warning). Defining a name twice on one
  `FlagValues` raises `DuplicateFlagError` naming the flag and both defining modules.
- `flag_values(argv, known_only=False)` parses `argv` (`argv[0]` is the program name) and
  returns `[argv[0]] + the arguments it did not consume`, in their order. Accepted forms:
  `--name=value`, `--name value`, `-name=value`, `-name value`, a short name (`-n 5`),
  `--bool` (true), `--nobool` (false), `--bool=false` (true/t/1, false/f/0, any case);
  a boolean flag never takes the next argument as its value. Positional arguments may be
  interleaved with flags (GNU style); `--` ends the flags (it is dropped, or kept in the
  result when `known_only`). `--undefok=a,b` tolerates the unknown flags a and b (and noa,
  nob). A flag given twice takes the last value. An unknown flag raises
  `UnrecognizedFlagError` unless `known_only`, in which case it is left in the result.
  A value that does not convert raises `IllegalFlagValueError`
  (`flag --steps=abc: invalid literal for int() with base 10: 'abc'`); a missing value
  raises `Error` (`Missing value for flag --steps`). Then the flags are marked parsed and
  the validators (`required=True`, `mark_flag_as_required`, `register_validator`) run.
  Every error is a subclass of `Error`.
- A `FlagValues` (absl's class, `flags.FlagValues()` for a fresh, empty set) raises
  `UnparsedFlagAccessError` when a flag is read before parsing. `FLAGS` is a
  `LazyFlagValues`, as TF 1.x's wrapper: the first read of a flag before any parse parses
  `sys.argv` with `known_only=True`. Assigning `FLAGS.name = value` sets the value as
  given (no conversion) and runs that flag's validators; `del FLAGS.name` undefines it.
- `FLAGS[name]` is the `Flag` (`name`, `value`, `default`, `help`, `short_name`,
  `boolean`, `present`, `using_default_value`).

Not supported: `--flagfile`, multi-value flags (DEFINE_multi_*), flags of C++ code.
`tensorweave.platform.app.run` parses `FLAGS` and adds absl's `--help`/`--helpfull`.
"""

import csv
import difflib
import sys

from tensorweave.platform import tf_logging as _logging

__all__ = [
    "Error", "DuplicateFlagError", "IllegalFlagValueError", "UnrecognizedFlagError",
    "UnparsedFlagAccessError", "ValidationError", "Flag", "FlagHolder", "FlagValues",
    "LazyFlagValues", "FLAGS", "DEFINE_string", "DEFINE_integer", "DEFINE_float",
    "DEFINE_boolean", "DEFINE_bool", "DEFINE_list", "DEFINE_enum", "mark_flag_as_required",
    "register_validator",
]


class Error(Exception):
    """The base class of every flags error."""


class DuplicateFlagError(Error):
    """A flag name defined twice on one FlagValues."""


class IllegalFlagValueError(Error):
    """A value a flag cannot take (conversion failed, out of bounds, validator failed)."""


class UnrecognizedFlagError(Error):
    """An unknown flag on the command line (or assigned as an attribute)."""

    def __init__(self, flagname, flagvalue="", suggestions=None):
        self.flagname = flagname
        self.flagvalue = flagvalue
        tip = ". Did you mean: %s ?" % ", ".join(suggestions) if suggestions else ""
        super().__init__("Unknown command line flag '%s'%s" % (flagname, tip))


class UnparsedFlagAccessError(Error):
    """A flag of a plain FlagValues read before the command line was parsed."""


class ValidationError(Error):
    """Raised by a validator's checker to explain why a value is rejected."""


# ----------------------------------------------------------------------------- parsers
# Each converts one command-line string (or a Python default) to the flag's value, raising
# ValueError or TypeError, which Flag turns into IllegalFlagValueError naming the flag.

class _StringParser:
    flag_type = "string"
    syntactic_help = ""

    def parse(self, argument):
        if not isinstance(argument, str):
            raise TypeError('flag value must be a string, found "%s"' % type(argument))
        return argument


class _BooleanParser:
    flag_type = "bool"
    syntactic_help = ""

    def parse(self, argument):
        if isinstance(argument, str):
            if argument.lower() in ("true", "t", "1"):
                return True
            if argument.lower() in ("false", "f", "0"):
                return False
        elif isinstance(argument, int) and argument in (0, 1):  # bool is an int
            return bool(argument)
        raise ValueError("Non-boolean argument to boolean flag: %r" % (argument,))


class _NumberParser:
    """Integers (`0x` hex and `0o` octal too) or floats, with optional inclusive bounds."""

    def __init__(self, kind, lower_bound=None, upper_bound=None):
        self.kind = kind  # int or float
        self.flag_type = "int" if kind is int else "float"
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        name = "integer" if kind is int else "number"
        help_text = "an integer" if kind is int else "a number"
        if lower_bound is not None and upper_bound is not None:
            help_text = "%s in the range [%s, %s]" % (help_text, lower_bound, upper_bound)
        elif lower_bound == 1:
            help_text = "a positive %s" % name
        elif upper_bound == -1:
            help_text = "a negative %s" % name
        elif lower_bound == 0:
            help_text = "a non-negative %s" % name
        elif upper_bound == 0:
            help_text = "a non-positive %s" % name
        elif upper_bound is not None:
            help_text = "%s <= %s" % (name, upper_bound)
        elif lower_bound is not None:
            help_text = "%s >= %s" % (name, lower_bound)
        self.syntactic_help = help_text

    def _convert(self, argument):
        if isinstance(argument, bool):
            raise TypeError("Expect argument to be a string or %s, found bool" % self.flag_type)
        if self.kind is int:
            if isinstance(argument, int):
                return argument
            if isinstance(argument, str):
                base = 10
                if len(argument) > 2 and argument[0] == "0":
                    base = {"o": 8, "x": 16}.get(argument[1], 10)
                return int(argument, base)
        elif isinstance(argument, (int, float, str)):
            return float(argument)
        raise TypeError("Expect argument to be a string or %s, found %s"
                        % (self.flag_type, type(argument)))

    def parse(self, argument):
        value = self._convert(argument)
        if ((self.lower_bound is not None and value < self.lower_bound) or
                (self.upper_bound is not None and value > self.upper_bound)):
            raise ValueError("%s is not %s" % (value, self.syntactic_help))
        return value


class _ListParser:
    flag_type = "list"
    syntactic_help = "a comma separated list"

    def parse(self, argument):
        if isinstance(argument, list):
            return argument
        if not argument:
            return []
        try:
            return [s.strip() for s in next(csv.reader([argument], strict=True))]
        except csv.Error as e:
            raise ValueError("Unable to parse the value %r as a list: %s" % (argument, e))


class _EnumParser:
    flag_type = "enum"

    def __init__(self, enum_values, case_sensitive=True):
        if not enum_values:
            raise ValueError("enum_values cannot be empty, found %r" % (enum_values,))
        self.enum_values = list(enum_values)
        self.case_sensitive = case_sensitive
        self.syntactic_help = "one of <%s>" % "|".join(self.enum_values)

    def parse(self, argument):
        if self.case_sensitive:
            if argument in self.enum_values:
                return argument
        elif isinstance(argument, str):
            for value in self.enum_values:
                if value.upper() == argument.upper():
                    return value
        raise ValueError("value should be one of <%s>" % "|".join(self.enum_values))


# ----------------------------------------------------------------------------- flags

class Flag:
    """One flag: its definition and its current value.

    `value` is the current value; `default` the parsed default; `present` how many times the
    command line gave it; `using_default_value` is False once it was parsed or assigned."""

    def __init__(self, parser, name, default, help, short_name=None, boolean=False,  # noqa: A002
                 module_name=None):
        if not isinstance(name, str) or not name:
            raise Error("Flag name must be a non-empty string, found %r" % (name,))
        self.parser = parser
        self.name = name
        self.short_name = short_name
        self.help = "(no help available)" if help is None else help
        self.boolean = boolean
        self.module_name = module_name
        self.present = 0
        self.using_default_value = True
        self.validators = []
        self.value = None
        self._set_default(default)

    @property
    def flag_type(self):
        return self.parser.flag_type

    def _parse(self, argument):
        try:
            return self.parser.parse(argument)
        except (TypeError, ValueError) as e:
            raise IllegalFlagValueError("flag --%s=%s: %s" % (self.name, argument, e)) from None

    def _set_default(self, value):
        self.default_unparsed = value
        self.default = None if value is None else self._parse(value)
        if self.using_default_value:
            self.value = self.default

    def parse(self, argument):
        """Sets the value from a command-line string; IllegalFlagValueError if it does not
        convert."""
        self.value = self._parse(argument)
        self.present += 1
        self.using_default_value = False

    def unparse(self):
        """Back to the default, as if never parsed."""
        self.value = self.default
        self.using_default_value = True
        self.present = 0

    def _default_text(self):
        if self.default is None:
            return "None"
        if isinstance(self.default, bool):
            return "'%s'" % str(self.default).lower()
        if isinstance(self.default, list):
            return "'%s'" % ",".join(str(v) for v in self.default)
        return "'%s'" % (self.default,)

    def _help_text(self, prefix="  "):
        names = ("-%s," % self.short_name if self.short_name else "") + \
            ("--[no]%s" % self.name if self.boolean else "--%s" % self.name)
        help_text = self.help
        if isinstance(self.parser, _EnumParser):
            help_text = "<%s>: %s" % ("|".join(self.parser.enum_values), help_text)
        lines = ["%s%s: %s" % (prefix, names, help_text),
                 "%s  (default: %s)" % (prefix, self._default_text())]
        if self.parser.syntactic_help and not isinstance(self.parser, _EnumParser):
            lines.append("%s  (%s)" % (prefix, self.parser.syntactic_help))
        return "\n".join(lines)

    def __repr__(self):
        return "<%s --%s=%r>" % (type(self).__name__, self.name, self.value)


class FlagHolder:
    """What DEFINE_* return: `.value` reads the flag through its FlagValues (so FLAGS parses
    lazily), `.name`, `.default`, `.present`."""

    def __init__(self, flag_values, flag):
        self._flag_values = flag_values
        self._name = flag.name

    @property
    def name(self):
        return self._name

    @property
    def value(self):
        return getattr(self._flag_values, self._name)

    @property
    def default(self):
        return self._flag_values[self._name].default

    @property
    def present(self):
        return bool(self._flag_values[self._name].present)

    def __repr__(self):
        return "<FlagHolder --%s>" % self._name


def _calling_module_name():
    """The module defining a flag: the first frame outside this package's platform files
    (the program's path for __main__, as absl names it)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
            "tensorweave.platform."):
        frame = frame.f_back
    name = frame.f_globals.get("__name__", "<unknown>") if frame else "<unknown>"
    if name == "__main__" and sys.argv and sys.argv[0]:
        return sys.argv[0]
    return name


class FlagValues:
    """A set of flags and their values (absl's FlagValues; `FLAGS` is the global one).

    Reading `fv.name` gives the value of flag `name`: AttributeError for an unknown name,
    UnparsedFlagAccessError before `fv(argv)` has completed (unless the command line
    already gave that flag). Not thread-safe while defining or parsing."""

    def __init__(self):
        self.__dict__["_flag_dict"] = {}   # long and short names -> Flag
        self.__dict__["_parsed"] = False

    # --- defining
    def _register(self, flag):
        for key in (flag.name, flag.short_name):
            if key is None:
                continue
            existing = self._flag_dict.get(key)
            if existing is not None:
                raise DuplicateFlagError(
                    "The flag '%s' is defined twice. First from %s, Second from %s.  "
                    "Description from first occurrence: %s"
                    % (key, existing.module_name, flag.module_name, existing.help))
        for key in (flag.name, flag.short_name):
            if key is not None:
                self._flag_dict[key] = flag

    def _flags(self):
        """The dict of every flag by long and short name (absl's, used by TF 1.x idioms that
        undefine all flags)."""
        return self._flag_dict

    def _all_flags(self):
        seen = []
        for flag in self._flag_dict.values():
            if all(flag is not f for f in seen):
                seen.append(flag)
        return seen

    # --- parsing
    def __call__(self, argv, known_only=False):
        if isinstance(argv, (str, bytes)):
            raise TypeError("argv should be a tuple/list of strings, not bytes or string.")
        argv = list(argv)
        if not argv:
            raise ValueError("argv cannot be an empty list, and must contain the program "
                             "name as the first element.")
        unknown, unparsed = self._parse_args(argv[1:], known_only)
        for name, _ in unknown:
            suggestions = difflib.get_close_matches(name, sorted(self._flag_dict), n=3,
                                                    cutoff=0.75)
            raise UnrecognizedFlagError(name, "", suggestions)
        self.mark_as_parsed()
        self.validate_all_flags()
        return [argv[0]] + unparsed

    def _parse_args(self, args, known_only):
        """absl's GNU-style scan: returns ([(name, arg)] unknown, [arg] left over)."""
        pending = []  # (flag name or None for a positional argument, arg), in order
        undefok = set()
        args = iter(args)
        for arg in args:
            value = None

            def get_value():
                if value is not None:
                    return value
                try:
                    return next(args)
                except StopIteration:
                    raise Error("Missing value for flag " + arg) from None

            if not isinstance(arg, str):
                raise TypeError("argv should contain strings, found %r" % (arg,))
            if not arg.startswith("-"):
                pending.append((None, arg))
                continue
            if arg == "--":
                if known_only:
                    pending.append((None, arg))
                break
            body = arg[2:] if arg.startswith("--") else arg[1:]
            name, value = body.split("=", 1) if "=" in body else (body, None)
            if not name:  # "-" alone, or "--=x"
                pending.append((None, arg))
                continue
            if name == "undefok":
                names = [v.strip() for v in get_value().split(",")]
                undefok.update(names)
                undefok.update("no" + v for v in names)
                continue
            flag = self._flag_dict.get(name)
            if flag is not None:
                value = "true" if flag.boolean and value is None else get_value()
            elif name.startswith("no") and len(name) > 2:
                negated = self._flag_dict.get(name[2:])
                if negated is not None and negated.boolean:
                    if value is not None:
                        raise IllegalFlagValueError(arg + " does not take an argument")
                    flag, value = negated, "false"
            if flag is not None:
                flag.parse(value)
            else:
                pending.append((name, arg))

        unknown, unparsed = [], []
        for name, arg in pending:
            if name is None:
                unparsed.append(arg)
            elif name in undefok:
                continue
            elif known_only:
                unparsed.append(arg)
            else:
                unknown.append((name, arg))
        unparsed.extend(args)
        return unknown, unparsed

    def is_parsed(self):
        return self._parsed

    def mark_as_parsed(self):
        self.__dict__["_parsed"] = True

    def unparse_flags(self):
        """Every flag back to its default, and the set marked not parsed."""
        for flag in self._all_flags():
            flag.unparse()
        self.__dict__["_parsed"] = False

    def validate_all_flags(self):
        for flag in self._all_flags():
            self._validate(flag)

    def _validate(self, flag):
        for checker, message in flag.validators:
            try:
                ok = checker(flag.value)
            except ValidationError as e:
                ok, message = False, str(e)
            if not ok:
                raise IllegalFlagValueError("flag --%s=%s: %s" % (flag.name, flag.value,
                                                                  message))

    # --- values
    def __getattr__(self, name):
        flag = self.__dict__.get("_flag_dict", {}).get(name)
        if flag is None:
            raise AttributeError(name)
        if not self.__dict__["_parsed"]:
            self._read_before_parse(flag)
        return flag.value

    def _read_before_parse(self, flag):
        if not flag.present:
            raise UnparsedFlagAccessError(
                "Trying to access flag --%s before flags were parsed." % flag.name)

    def __setattr__(self, name, value):
        flag = self._flag_dict.get(name)
        if flag is None:
            raise UnrecognizedFlagError(name, value)
        flag.value = value
        flag.using_default_value = False
        self._validate(flag)

    def __delattr__(self, name):
        flag = self._flag_dict.get(name)
        if flag is None:
            raise AttributeError(name)
        for key in [k for k, f in self._flag_dict.items() if f is flag]:
            del self._flag_dict[key]

    def __getitem__(self, name):
        return self._flag_dict[name]

    def __contains__(self, name):
        return name in self._flag_dict

    def __iter__(self):
        return iter([flag.name for flag in self._all_flags()])

    def __len__(self):
        return len(self._all_flags())

    def get_flag_value(self, name, default):
        """The flag's value, or `default` when there is no such flag (never raises for an
        unparsed set)."""
        flag = self._flag_dict.get(name)
        return default if flag is None else flag.value

    def set_default(self, name, value):
        """Changes the default (and the value, unless parsed or assigned)."""
        flag = self._flag_dict.get(name)
        if flag is None:
            raise UnrecognizedFlagError(name, value)
        flag._set_default(value)
        self._validate(flag)

    def flag_values_dict(self):
        """{name: value} for every flag."""
        return {flag.name: flag.value for flag in self._all_flags()}

    def get_help(self, prefix="  ", modules=None):
        """Every flag's help, grouped by defining module (only `modules` when given)."""
        by_module = {}
        for flag in self._all_flags():
            if modules is None or flag.module_name in modules:
                by_module.setdefault(flag.module_name, []).append(flag)
        parts = []
        for module in sorted(by_module, key=str):
            parts.append("\n%s:" % module)
            for flag in sorted(by_module[module], key=lambda f: f.name):
                parts.append(flag._help_text(prefix))
        return "\n".join(parts)

    def main_module_help(self):
        """The help of the flags the main program defined."""
        main = sys.argv[0] if sys.argv and sys.argv[0] else "__main__"
        return self.get_help(modules={main, "__main__"})

    def __str__(self):
        return self.get_help()


class LazyFlagValues(FlagValues):
    """FlagValues as TF 1.x's `tf.flags.FLAGS` behaves: reading a flag before any parse
    parses `sys.argv` with `known_only=True` (raising that parse's errors) instead of
    raising UnparsedFlagAccessError."""

    def _read_before_parse(self, flag):
        self(sys.argv if getattr(sys, "argv", None) else [""], known_only=True)


FLAGS = LazyFlagValues()

_RENAMED_ARGUMENTS = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def _define(define):
    """TF 1.x's wrapper: accepts the old keyword names, with its deprecation warning."""
    def wrapper(*args, **kwargs):
        renamed = False
        for old, new in _RENAMED_ARGUMENTS.items():
            if old in kwargs:
                kwargs[new] = kwargs.pop(old)
                renamed = True
        if renamed:
            _logging.warning("Use of the keyword argument names (flag_name, default_value, "
                             "docstring) is deprecated, please use (name, default, help) "
                             "instead.")
        return define(*args, **kwargs)
    wrapper.__name__ = define.__name__
    wrapper.__qualname__ = define.__qualname__
    wrapper.__doc__ = define.__doc__
    wrapper.__wrapped__ = define
    return wrapper


def _define_flag(flag_values, flag, required):
    flag_values = FLAGS if flag_values is None else flag_values
    flag_values._register(flag)
    if required:
        mark_flag_as_required(flag.name, flag_values)
    return FlagHolder(flag_values, flag)


@_define
def DEFINE_string(name, default, help, flag_values=None, required=False,  # noqa: A002,N802
                  short_name=None):
    """A string flag (default may be None)."""
    return _define_flag(flag_values, Flag(_StringParser(), name, default, help, short_name,
                                          module_name=_calling_module_name()), required)


@_define
def DEFINE_boolean(name, default, help, flag_values=None, required=False,  # noqa: A002,N802
                   short_name=None):
    """A boolean flag: `--name`, `--noname`, `--name=true|false|t|f|1|0`."""
    return _define_flag(flag_values, Flag(_BooleanParser(), name, default, help, short_name,
                                          boolean=True, module_name=_calling_module_name()),
                        required)


DEFINE_bool = DEFINE_boolean


@_define
def DEFINE_integer(name, default, help, lower_bound=None, upper_bound=None,  # noqa: A002,N802
                   flag_values=None, required=False, short_name=None):
    """An int flag (`0x..` and `0o..` accepted), optionally bounded (inclusive)."""
    parser = _NumberParser(int, lower_bound, upper_bound)
    return _define_flag(flag_values, Flag(parser, name, default, help, short_name,
                                          module_name=_calling_module_name()), required)


@_define
def DEFINE_float(name, default, help, lower_bound=None, upper_bound=None,  # noqa: A002,N802
                 flag_values=None, required=False, short_name=None):
    """A float flag, optionally bounded (inclusive)."""
    parser = _NumberParser(float, lower_bound, upper_bound)
    return _define_flag(flag_values, Flag(parser, name, default, help, short_name,
                                          module_name=_calling_module_name()), required)


@_define
def DEFINE_list(name, default, help, flag_values=None, required=False,  # noqa: A002,N802
                short_name=None):
    """A list of strings, given comma-separated (CSV quoting; items stripped; '' is [])."""
    return _define_flag(flag_values, Flag(_ListParser(), name, default, help, short_name,
                                          module_name=_calling_module_name()), required)


@_define
def DEFINE_enum(name, default, enum_values, help, flag_values=None,  # noqa: A002,N802
                required=False, short_name=None, case_sensitive=True):
    """A string flag restricted to `enum_values` (compared case-insensitively when
    `case_sensitive=False`, giving the value as spelled in `enum_values`)."""
    parser = _EnumParser(enum_values, case_sensitive)
    return _define_flag(flag_values, Flag(parser, name, default, help, short_name,
                                          module_name=_calling_module_name()), required)


def register_validator(flag_name, checker, message="Flag validation failed",
                       flag_values=None):
    """After each parse, and on assignment, `checker(value)` must return True (or raise
    ValidationError with its own message); otherwise IllegalFlagValueError
    `flag --name=value: message`."""
    flag_values = FLAGS if flag_values is None else flag_values
    if flag_name not in flag_values:
        raise KeyError("Flag --%s does not exist." % flag_name)
    flag_values[flag_name].validators.append((checker, message))


def mark_flag_as_required(flag_name, flag_values=None):
    """Parsing fails unless the flag ends with a value other than None."""
    register_validator(flag_name, lambda value: value is not None,
                       "Flag --%s must have a value other than None." % flag_name,
                       flag_values)
