"""TF 1.x's `tf.app.flags` (the same module as `tf.flags`): absl's flags (Debian's
python3-absl), wrapped as TF 1.x wraps them.

- `FLAGS` parses `sys.argv` (known flags only) the first time a flag is read, so a program
  that reads flags without `tf.app.run` works as it did with TF.
- The `DEFINE_*` functions also take TF's old keyword names (`flag_name`, `default_value`,
  `docstring`), with TF's deprecation warning.

Everything else (FlagValues, the DEFINE_* functions, validators, the errors) is absl's."""

import functools
import logging
import sys

from absl import flags as _absl_flags
from absl.flags import *  # noqa: F401,F403 - TF's flags module re-exports absl's

_RENAMED_ARGUMENTS = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def _wrap_define_function(original):
    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        renamed = [old for old in _RENAMED_ARGUMENTS if old in kwargs]
        for old in renamed:
            kwargs[_RENAMED_ARGUMENTS[old]] = kwargs.pop(old)
        if renamed:
            logging.getLogger("tensorflow").warning(
                "Use of the keyword argument names (flag_name, default_value, docstring) is "
                "deprecated, please use (name, default, help) instead.")
        return original(*args, **kwargs)
    return wrapper


class _FlagValuesWrapper:
    """absl's FlagValues, parsing sys.argv (known flags only) at the first read of a flag,
    as TF 1.x's FLAGS does."""

    def __init__(self, flag_values):
        self.__dict__["_wrapped"] = flag_values

    def __getattr__(self, name):
        wrapped = self.__dict__["_wrapped"]
        if not wrapped.is_parsed() and name in wrapped:
            wrapped(sys.argv, known_only=True)
        return getattr(wrapped, name)

    def __setattr__(self, name, value):
        setattr(self.__dict__["_wrapped"], name, value)

    def __delattr__(self, name):
        delattr(self.__dict__["_wrapped"], name)

    def __dir__(self):
        return dir(self.__dict__["_wrapped"])

    def __getitem__(self, name):
        return self.__dict__["_wrapped"][name]

    def __setitem__(self, name, flag):
        self.__dict__["_wrapped"][name] = flag

    def __contains__(self, name):
        return name in self.__dict__["_wrapped"]

    def __len__(self):
        return len(self.__dict__["_wrapped"])

    def __iter__(self):
        return iter(self.__dict__["_wrapped"])

    def __str__(self):
        return str(self.__dict__["_wrapped"])

    def __call__(self, *args, **kwargs):
        return self.__dict__["_wrapped"](*args, **kwargs)


FLAGS = _FlagValuesWrapper(_absl_flags.FLAGS)

for _name in dir(_absl_flags):
    if _name.startswith("DEFINE"):
        globals()[_name] = _wrap_define_function(getattr(_absl_flags, _name))
del _name
