"""tf.int8, tf.int16, tf.uint16, tf.complex64 and tf.complex128: TF's properties, and their
values through feeds and fetches, constants, variables, checkpoints and FIFO queues, in
one process and between tasks. Kernels that compute do not take them, and say so."""

import numpy as np
import pytest

import tensorweave.compat.v1 as tf
from conftest import in_process_cluster

# (dtype, TF's enum, numpy type, size, is_integer, is_complex, is_unsigned)
NEW_TYPES = [
    (tf.int8, 6, np.int8, 1, True, False, False),
    (tf.int16, 5, np.int16, 2, True, False, False),
    (tf.uint16, 17, np.uint16, 2, True, False, True),
    (tf.complex64, 8, np.complex64, 8, False, True, False),
    (tf.complex128, 18, np.complex128, 16, False, True, False),
]


def values(dtype, seed=0):
    """Two distinct elements of `dtype` at its extremes (or, for complex, with nonzero
    imaginary parts)."""
    np_type = dtype.as_numpy_dtype
    if dtype.is_complex:
        return np.array([1.5 + seed - 2j, -0.25j * (seed + 1)], dtype=np_type)
    info = np.iinfo(np_type)
    return np.array([info.min + seed, info.max - seed], dtype=np_type)


@pytest.mark.parametrize("dtype,enum,np_type,size,is_integer,is_complex,is_unsigned", NEW_TYPES)
def test_properties_are_tensorflows(dtype, enum, np_type, size, is_integer, is_complex,
                                    is_unsigned):
    name = np.dtype(np_type).name
    assert dtype.name == name and repr(dtype) == "tf." + name
    assert dtype.as_datatype_enum == enum
    assert dtype.as_numpy_dtype is np_type
    assert dtype.size == size
    assert (dtype.is_integer, dtype.is_complex, dtype.is_unsigned) == (
        is_integer, is_complex, is_unsigned)
    assert not dtype.is_floating and not dtype.is_bool
    for spelling in (name, enum, np_type, np.dtype(np_type), dtype):
        assert tf.as_dtype(spelling) is dtype
    if is_integer:
        assert (dtype.min, dtype.max) == (np.iinfo(np_type).min, np.iinfo(np_type).max)
        assert dtype.real_dtype is dtype
    else:
        with pytest.raises(TypeError, match="Cannot find minimum value"):
            dtype.min
        with pytest.raises(TypeError, match="Cannot find maximum value"):
            dtype.max
    assert tf.complex64.real_dtype is tf.float32 and tf.complex128.real_dtype is tf.float64


def test_python_complex_values_make_complex128_constants():
    c = tf.constant([1 + 2j, 3])
    assert c.dtype == tf.complex128
    with tf.Session() as s:
        out = s.run(c)
    assert out.dtype == np.complex128
    np.testing.assert_array_equal(out, [1 + 2j, 3 + 0j])


def build_graph(device):
    """Placeholders fed into Identity, constants and variables on `device`, and a queue of
    one component per type there."""
    types = [t[0] for t in NEW_TYPES]
    with tf.device(device):
        queue = tf.FIFOQueue(10, types, shapes=[[2]] * len(types), shared_name="dtypes")
        feeds = [tf.placeholder(t, name="feed_" + t.name) for t in types]
        identities = [tf.identity(f) for f in feeds]
        consts = [tf.constant(values(t, 3)) for t in types]
        variables = [tf.Variable(values(t, 4), name="var_" + t.name) for t in types]
        assigns = [v.assign(f) for v, f in zip(variables, feeds)]
    return {"types": types, "queue": queue, "feeds": feeds, "identities": identities,
            "consts": consts, "variables": variables, "assigns": assigns,
            "enqueue": queue.enqueue(feeds), "dequeue": queue.dequeue(),
            "enqueue_many": queue.enqueue_many(feeds), "dequeue_many": queue.dequeue_many(2)}


def assert_same(got, want):
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def run_every_path(g, writer, reader):
    types = g["types"]
    a = [values(t, 1) for t in types]
    b = [values(t, 2) for t in types]

    assert_same(writer.run(g["identities"], dict(zip(g["feeds"], a))), a)
    assert_same(reader.run(g["consts"]), [values(t, 3) for t in types])

    writer.run([v.initializer for v in g["variables"]])
    assert_same(reader.run(g["variables"]), [values(t, 4) for t in types])
    writer.run(g["assigns"], dict(zip(g["feeds"], b)))
    assert_same(reader.run(g["variables"]), b)

    writer.run(g["enqueue"], dict(zip(g["feeds"], a)))
    writer.run(g["enqueue"], dict(zip(g["feeds"], b)))
    assert_same(reader.run(g["dequeue"]), a)
    assert_same(reader.run(g["dequeue"]), b)
    batches = [np.stack([x, y]) for x, y in zip(b, a)]
    writer.run(g["enqueue_many"], dict(zip(g["feeds"], batches)))
    assert_same(reader.run(g["dequeue_many"]), batches)


def test_every_path_in_one_process():
    g = build_graph("")
    with tf.Session() as s:
        run_every_path(g, s, s)


def test_every_path_between_tasks():
    """Feeds on the worker, state on ps:0, fetches by a session on the ps task."""
    servers = in_process_cluster(1)
    try:
        g = build_graph("/job:ps/task:0")
        with tf.Session(servers[-1].target) as writer, tf.Session(servers[0].target) as reader:
            run_every_path(g, writer, reader)
    finally:
        for server in servers:
            server.stop()


def test_python_scalars_and_lists_feed_the_new_types():
    x = tf.placeholder(tf.int16)
    z = tf.placeholder(tf.complex64)
    with tf.Session() as s:
        out_x, out_z = s.run([tf.identity(x), tf.identity(z)], {x: [-5, 300], z: 2 - 1j})
    assert out_x.dtype == np.int16 and out_x.tolist() == [-5, 300]
    assert out_z.dtype == np.complex64 and out_z == 2 - 1j
    with pytest.raises(TypeError, match="not compatible"):
        with tf.Session() as s:
            s.run(tf.identity(x), {x: 40000})


def test_variables_of_the_new_types_save_and_restore(tmp_path):
    variables = [tf.Variable(values(t[0], 5), name="v_" + t[0].name) for t in NEW_TYPES]
    saver = tf.train.Saver()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        path = saver.save(s, str(tmp_path / "model"))
    with tf.Session() as s:
        saver.restore(s, path)
        assert_same(s.run(variables), [values(t[0], 5) for t in NEW_TYPES])


@pytest.mark.parametrize("dtype", [tf.int8, tf.uint16, tf.complex64, tf.complex128])
def test_a_kernel_that_computes_refuses_the_new_types_by_name(dtype):
    x = tf.placeholder(dtype)
    with pytest.raises((TypeError, ValueError), match=r"\b%s\b" % dtype.name):
        tf.add(x, x)
    with pytest.raises((TypeError, ValueError), match=r"\b%s\b" % dtype.name):
        tf.cast(x, tf.float32)


@pytest.mark.parametrize("dtype", [tf.int8, tf.int16, tf.uint16, tf.complex64, tf.complex128])
def test_ops_that_only_move_elements_take_the_new_types(dtype):
    a, b = values(dtype, 1), values(dtype, 2)
    x = tf.constant(np.stack([a, b]))
    with tf.Session() as s:
        concat, gathered, sliced, strided, stacked, reshaped = s.run([
            tf.concat([x, x], 0), tf.gather(x, [1, 0, 1]), tf.slice(x, [1, 0], [1, 2]),
            x[:, ::-1], tf.stack([a, b]), tf.reshape(x, [4])])
    both = np.stack([a, b])
    assert_same([concat, gathered, sliced, strided, stacked, reshaped],
                [np.concatenate([both, both]), both[[1, 0, 1]], both[1:, :], both[:, ::-1],
                 both, both.reshape(4)])
