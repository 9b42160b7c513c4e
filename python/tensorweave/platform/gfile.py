"""tf.gfile and tf.io.gfile: TF 1.x's file API over the local file system.

TensorFlow routes these through its C++ FileSystem registry (local files, gs://, hdfs://);
tensorweave has only local files, so each call is the operating system's own, with TF's
semantics where they differ from Python's: errors are tf.errors classes (a missing file is
NotFoundError, an existing directory for MkDir is AlreadyExistsError), `MakeDirs` of an
existing directory is fine, `Copy`/`Rename` refuse to overwrite unless told to, and a file
opened in text mode reads and writes str, in binary mode bytes. A path with a scheme other
than file:// is UnimplementedError naming it."""

import errno
import glob as _glob
import os
import shutil

from tensorweave import errors


def _local(path):
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = path.decode()
    if "://" in path:
        scheme, rest = path.split("://", 1)
        if scheme != "file":
            raise errors.UnimplementedError(
                None, None, "File system scheme '%s' not implemented (file: '%s'): "
                "tensorweave reads and writes local files only" % (scheme, path))
        return rest
    return path


def _os_error(e, path):
    """The tf.errors class TensorFlow raises for an OSError of a file operation."""
    code = {errno.ENOENT: errors.NotFoundError, errno.EEXIST: errors.AlreadyExistsError,
            errno.EACCES: errors.PermissionDeniedError,
            errno.EPERM: errors.PermissionDeniedError,
            errno.ENOTDIR: errors.FailedPreconditionError,
            errno.EISDIR: errors.FailedPreconditionError,
            errno.ENOTEMPTY: errors.FailedPreconditionError}.get(e.errno, errors.UnknownError)
    return code(None, None, "%s; %s" % (path, e.strerror or e))


class GFile:
    """A file: `GFile(name, mode)` with TF's modes ('r', 'w', 'a', with 'b' for bytes, '+').
    The file is opened at the first read or write, as TF's is."""

    def __init__(self, name, mode="r"):
        if mode.replace("b", "").replace("+", "") not in ("r", "w", "a"):
            raise errors.InvalidArgumentError(None, None, "Invalid mode: %r" % mode)
        self._name = _local(name)
        self._mode = mode
        self._file = None

    def _f(self):
        if self._file is None:
            try:
                self._file = open(self._name, self._mode)
            except OSError as e:
                raise _os_error(e, self._name) from None
        return self._file

    @property
    def name(self):
        return self._name

    @property
    def mode(self):
        return self._mode

    def size(self):
        return stat(self._name).length

    def read(self, n=-1):
        return self._f().read(n)

    def readline(self):
        return self._f().readline()

    def readlines(self):
        return self._f().readlines()

    def write(self, data):
        f = self._f()
        if "b" in self._mode and isinstance(data, str):
            data = data.encode()
        elif "b" not in self._mode and isinstance(data, bytes):
            data = data.decode()
        f.write(data)

    def seek(self, offset=None, whence=0, position=None):
        if position is not None:
            offset = position
        return self._f().seek(offset, whence)

    def tell(self):
        return self._f().tell()

    def flush(self):
        if self._file is not None:
            self._file.flush()

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None

    def seekable(self):
        return True

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


Open = FastGFile = GFile


def exists(path):
    return os.path.exists(_local(path))


def isdir(path):
    return os.path.isdir(_local(path))


def listdir(path):
    """The names in directory `path`, without '.' and '..'; NotFoundError when it does not
    exist."""
    path = _local(path)
    if not os.path.isdir(path):
        raise errors.NotFoundError(None, None, "Could not find directory %s" % path)
    return os.listdir(path)


def mkdir(path):
    path = _local(path)
    try:
        os.mkdir(path)
    except OSError as e:
        raise _os_error(e, path) from None


def makedirs(path):
    path = _local(path)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise _os_error(e, path) from None


def remove(path):
    path = _local(path)
    try:
        os.remove(path)
    except OSError as e:
        raise _os_error(e, path) from None


def rmtree(path):
    path = _local(path)
    if not os.path.exists(path):
        raise errors.NotFoundError(None, None, "%s; No such file or directory" % path)
    try:
        shutil.rmtree(path)
    except OSError as e:
        raise _os_error(e, path) from None


def rename(oldname, newname, overwrite=False):
    oldname, newname = _local(oldname), _local(newname)
    if not overwrite and os.path.exists(newname):
        raise errors.AlreadyExistsError(None, None, "file already exists: %s" % newname)
    try:
        os.replace(oldname, newname)
    except OSError as e:
        raise _os_error(e, oldname) from None


def copy(oldpath, newpath, overwrite=False):
    oldpath, newpath = _local(oldpath), _local(newpath)
    if not overwrite and os.path.exists(newpath):
        raise errors.AlreadyExistsError(None, None, "file already exists: %s" % newpath)
    try:
        shutil.copyfile(oldpath, newpath)
    except OSError as e:
        raise _os_error(e, oldpath) from None


def glob(pattern):
    """The paths matching `pattern` (TF's '*', '?', '[...]'), a list of str."""
    return _glob.glob(_local(pattern))


class FileStatistics:
    def __init__(self, length, mtime_nsec, is_directory):
        self.length = length
        self.mtime_nsec = mtime_nsec
        self.is_directory = is_directory


def stat(path):
    path = _local(path)
    try:
        s = os.stat(path)
    except OSError as e:
        raise _os_error(e, path) from None
    return FileStatistics(s.st_size, s.st_mtime_ns, os.path.isdir(path))


def walk(top, topdown=True, onerror=None):
    """(dirname, subdirectories, files) for `top` and every directory below it, as TF's
    (nothing for a directory that does not exist)."""
    top = _local(top)
    if not os.path.isdir(top):
        return
    for entry in os.walk(top, topdown=topdown,
                         onerror=(lambda e: onerror(_os_error(e, e.filename)))
                         if onerror else None):
        yield entry


# TF 1.x's tf.gfile names.
Exists = exists
IsDirectory = isdir
ListDirectory = listdir
MkDir = mkdir
MakeDirs = makedirs
Remove = remove
DeleteRecursively = rmtree
Rename = rename
Copy = copy
Glob = glob
Stat = stat
Walk = walk
