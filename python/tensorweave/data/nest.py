"""The structures of tf.data elements, as TF 1.x's tf.data nest: tuples, namedtuples and
dicts (by sorted key) are structure; anything else (a tensor, an array, a list, which
tf.data converts to one tensor) is a leaf."""


def is_sequence(x):
    return isinstance(x, (tuple, dict))


def flatten(structure):
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in flatten(structure[k])]
    if isinstance(structure, tuple):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack_sequence_as(structure, flat):
    """`flat`'s leaves in `structure`'s shape."""
    flat = list(flat)
    packed, rest = _pack(structure, flat)
    if rest:
        raise ValueError("Structure had %d leaves but %d values were given" %
                         (len(flatten(structure)), len(flat)))
    return packed


def _pack(structure, flat):
    if isinstance(structure, dict):
        out = {}
        for k in sorted(structure):
            out[k], flat = _pack(structure[k], flat)
        return type(structure)(out) if type(structure) is not dict else out, flat
    if isinstance(structure, tuple):
        items = []
        for item in structure:
            packed, flat = _pack(item, flat)
            items.append(packed)
        if hasattr(structure, "_fields"):  # a namedtuple
            return type(structure)(*items), flat
        return tuple(items), flat
    if not flat:
        raise ValueError("Structure has more leaves than the values given")
    return flat[0], flat[1:]


def map_structure(fn, structure):
    return pack_sequence_as(structure, [fn(leaf) for leaf in flatten(structure)])


def flatten_up_to(structure, values):
    """`values` flattened down to `structure`'s leaves only: a leaf of `structure` takes
    the whole corresponding part of `values` (a shape given as a list stays one leaf)."""
    if isinstance(structure, dict):
        return [v for k in sorted(structure) for v in flatten_up_to(structure[k], values[k])]
    if isinstance(structure, tuple):
        return [v for t, part in zip(structure, values) for v in flatten_up_to(t, part)]
    return [values]
