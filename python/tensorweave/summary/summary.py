"""TF 1.x's summary ops: tf.summary.scalar, histogram, merge and merge_all, over the C++
ScalarSummary, HistogramSummary and MergeSummary ops (src/ops/summary_ops.cc). Each returns
a scalar string tensor: a serialized Summary that tf.summary.FileWriter writes for
TensorBoard. Names, tags and collections follow TF 1.12's summary.py and
summary_op_util.py."""

import contextlib
import re

from tensorweave import _native
from tensorweave import raw_ops
from tensorweave.framework import ops
from tensorweave.platform import tf_logging as _log

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


def _clean_tag(name):
    """TF's clean_tag: characters TensorBoard does not accept become '_', and leading
    slashes go (logged, as TF does)."""
    if name is not None:
        new_name = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
        if new_name != name:
            _log.info("Summary name %s is illegal; using %s instead." % (name, new_name))
            name = new_name
    return name


@contextlib.contextmanager
def _summary_scope(name, family=None, default_name=None, values=None):
    """Yields (tag, scope): the op is named by the scope, the tag is the scope without its
    trailing slash (prefixed by the family, whose tab TensorBoard shows it in)."""
    name = _clean_tag(name)
    family = _clean_tag(family)
    scope_base_name = name if family is None else "{}/{}".format(family, name)
    with ops.name_scope(scope_base_name, default_name, values) as scope:
        if family is None:
            tag = scope.rstrip("/")
        else:
            tag = "{}/{}".format(family, scope.rstrip("/"))
        yield (tag, scope)


def _collect(val, collections, default_collections):
    if collections is None:
        collections = default_collections
    for key in collections:
        ops.add_to_collection(key, val)


def scalar(name, tensor, collections=None, family=None):
    """A Summary with the single value of `tensor` (a real scalar), tagged by the name
    scope `name` opens; added to `collections` (default: GraphKeys.SUMMARIES)."""
    with _summary_scope(name, family, values=[tensor]) as (tag, scope):
        val = raw_ops.ScalarSummary(tags=tag, values=tensor, name=scope)
        _collect(val, collections, [ops.GraphKeys.SUMMARIES])
    return val


def histogram(name, values, collections=None, family=None):
    """A Summary with a histogram of every element of `values`; running it fails with
    InvalidArgumentError on a NaN or infinite value."""
    with _summary_scope(name, family, values=[values], default_name="HistogramSummary") as (
            tag, scope):
        val = raw_ops.HistogramSummary(tag=tag, values=values, name=scope)
        _collect(val, collections, [ops.GraphKeys.SUMMARIES])
    return val


def merge(inputs, collections=None, name=None):
    """One Summary with the values of every Summary in `inputs`; running it fails with
    InvalidArgumentError when two have the same tag."""
    name = _clean_tag(name)
    with ops.name_scope(name, "Merge", inputs):
        val = raw_ops.MergeSummary(inputs=list(inputs), name=name or "MergeSummary")
        _collect(val, collections, [])
    return val


def merge_all(key=ops.GraphKeys.SUMMARIES, scope=None, name=None):
    """merge() of every summary in the `key` collection (filtered by `scope`), or None when
    there is none."""
    summary_ops = ops.get_collection(key, scope=scope)
    if not summary_ops:
        return None
    return merge(summary_ops, name=name)


class Summary:
    """TF's `tf.Summary` message as programs make it by hand for values computed outside
    the graph: `Summary(value=[Summary.Value(tag="acc", simple_value=0.9)])`, or values
    added with `summary.value.add(tag=..., simple_value=...)`, given to
    FileWriter.add_summary. Scalars only (simple_value); the C++ side serializes it."""

    class Value:
        def __init__(self, tag="", simple_value=0.0):
            self.tag = tag
            self.simple_value = simple_value

        def __repr__(self):
            return "Summary.Value(tag=%r, simple_value=%r)" % (self.tag, self.simple_value)

    class _Values(list):
        """The repeated field: a list, with protobuf's add()."""

        def add(self, tag="", simple_value=0.0):
            value = Summary.Value(tag=tag, simple_value=simple_value)
            self.append(value)
            return value

    def __init__(self, value=None):
        self.value = Summary._Values(value or [])

    def SerializeToString(self):  # noqa: N802 (protobuf's name)
        return _native.scalar_summary([(str(v.tag), float(v.simple_value))
                                       for v in self.value])
