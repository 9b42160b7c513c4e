"""Exceptions raised by the runtime, with TensorFlow 1.x's classes and codes.

Every failed step or call raises the `OpError` subclass of its status code. The runtime's
message is kept as is: it names the node ("node read (ReadVariable): ...") and, for steps
on a cluster, the task ("From /job:ps/replica:0/task:0: ..."). `op` and `node_def` are
filled when the message names a node of the session's graph.
"""

import re

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A runtime failure: `message`, `error_code`, and the failing `op`/`node_def` if known."""

    def __init__(self, node_def, op, message, error_code):
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code

    @property
    def message(self):
        return self._message

    @property
    def op(self):
        return self._op

    @property
    def node_def(self):
        return self._node_def

    @property
    def error_code(self):
        return self._error_code

    def __str__(self):
        return self._message


def _error_class(name, code, doc):
    def __init__(self, node_def, op, message, *args):
        OpError.__init__(self, node_def, op, message, code)

    return type(name, (OpError,), {"__init__": __init__, "__doc__": doc})


CancelledError = _error_class("CancelledError", CANCELLED, "A step or call was cancelled.")
UnknownError = _error_class("UnknownError", UNKNOWN, "An error of no other class.")
InvalidArgumentError = _error_class("InvalidArgumentError", INVALID_ARGUMENT,
                                    "An op or call got an invalid argument.")
DeadlineExceededError = _error_class("DeadlineExceededError", DEADLINE_EXCEEDED,
                                     "A deadline passed before the step or call finished.")
NotFoundError = _error_class("NotFoundError", NOT_FOUND, "Something requested was not found.")
AlreadyExistsError = _error_class("AlreadyExistsError", ALREADY_EXISTS,
                                  "Something to be created exists already.")
PermissionDeniedError = _error_class("PermissionDeniedError", PERMISSION_DENIED,
                                     "The caller may not do this.")
ResourceExhaustedError = _error_class("ResourceExhaustedError", RESOURCE_EXHAUSTED,
                                      "Some resource ran out.")
FailedPreconditionError = _error_class("FailedPreconditionError", FAILED_PRECONDITION,
                                       "The system is not in a state for this (say, an "
                                       "uninitialized variable).")
AbortedError = _error_class("AbortedError", ABORTED,
                            "The operation was aborted (say, a task restarted).")
OutOfRangeError = _error_class("OutOfRangeError", OUT_OF_RANGE,
                               "Past the end (say, a closed and empty queue).")
UnimplementedError = _error_class("UnimplementedError", UNIMPLEMENTED,
                                  "Not implemented by this runtime.")
InternalError = _error_class("InternalError", INTERNAL, "An internal error.")
UnavailableError = _error_class("UnavailableError", UNAVAILABLE,
                                "A task could not be reached.")
DataLossError = _error_class("DataLossError", DATA_LOSS, "Data were lost or corrupted.")
UnauthenticatedError = _error_class("UnauthenticatedError", UNAUTHENTICATED,
                                    "The caller's credentials were refused.")

_CODE_TO_CLASS = {
    CANCELLED: CancelledError, UNKNOWN: UnknownError, INVALID_ARGUMENT: InvalidArgumentError,
    DEADLINE_EXCEEDED: DeadlineExceededError, NOT_FOUND: NotFoundError,
    ALREADY_EXISTS: AlreadyExistsError, PERMISSION_DENIED: PermissionDeniedError,
    RESOURCE_EXHAUSTED: ResourceExhaustedError, FAILED_PRECONDITION: FailedPreconditionError,
    ABORTED: AbortedError, OUT_OF_RANGE: OutOfRangeError, UNIMPLEMENTED: UnimplementedError,
    INTERNAL: InternalError, UNAVAILABLE: UnavailableError, DATA_LOSS: DataLossError,
    UNAUTHENTICATED: UnauthenticatedError,
}


def exception_type_from_error_code(error_code):
    return _CODE_TO_CLASS[error_code]


def error_code_from_exception_type(cls):
    return next(code for code, c in _CODE_TO_CLASS.items() if c is cls)


# "node foo (Op): ..." as the runtime's kernels and builder name nodes.
_NODE_IN_MESSAGE = re.compile(r"\bnode ([A-Za-z0-9.][A-Za-z0-9_.\-/]*)")


def node_name_in(message):
    """The first node named in a runtime message, or None."""
    match = _NODE_IN_MESSAGE.search(message)
    return match.group(1) if match else None


def _from_status(code, message):
    """Called by the native module for every non-OK status."""
    return _CODE_TO_CLASS.get(code, UnknownError)(None, None, message)
