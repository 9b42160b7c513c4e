"""tf.string_split, tf.substr and tf.string_join (and their tf.strings names) as TF 1.x
programs use them: tokens of text lines as a SparseTensor in an input pipeline, substrings
in bytes and UTF-8 characters, joined keys; TensorFlow's errors."""

import pytest

import tensorweave.compat.v1 as tf


def test_string_split_gives_tokens_as_a_sparse_tensor():
    tokens = tf.string_split(["the quick fox", "jumps", ""])
    assert tokens.dense_shape.shape.as_list() == [2]
    with tf.Session() as sess:
        got = sess.run(tokens)
    assert got.indices.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0]]
    assert got.values.tolist() == [b"the", b"quick", b"fox", b"jumps"]
    assert got.dense_shape.tolist() == [3, 3]


def test_string_split_delimiters_skip_empty_and_dense():
    kept = tf.string_split(["a,,b;c"], delimiter=",;", skip_empty=False)
    dense = tf.sparse_tensor_to_dense(tf.string_split(["x y", "z"]), default_value="-")
    with tf.Session() as sess:
        assert sess.run(kept).values.tolist() == [b"a", b"", b"b", b"c"]
        assert sess.run(dense).tolist() == [[b"x", b"y"], [b"z", b"-"]]
    with pytest.raises(ValueError, match="RaggedTensor"):
        tf.string_split(["a"], result_type="RaggedTensor")


def test_string_split_in_a_text_pipeline(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("to be or\nnot to be\n")
    words = (tf.data.TextLineDataset([str(path)])
             .map(lambda line: tf.string_split([line]).values)
             .flat_map(tf.data.Dataset.from_tensor_slices))
    word = words.make_one_shot_iterator().get_next()
    seen = []
    with tf.Session() as sess:
        while True:
            try:
                seen.append(sess.run(word))
            except tf.errors.OutOfRangeError:
                break
    assert seen == [b"to", b"be", b"or", b"not", b"to", b"be"]


def test_substr_bytes_utf8_and_range_errors():
    words = tf.constant(["tensor", "weave"])
    with tf.Session() as sess:
        assert sess.run(tf.substr(words, 1, 3)).tolist() == [b"ens", b"eav"]
        assert sess.run(tf.strings.substr(words, [0, -2], [100, 2])).tolist() == [
            b"tensor", b"ve"]
        text = "h\u00e9llo"
        assert sess.run(tf.substr(text, 1, 2, unit="UTF8_CHAR")).decode() == "\u00e9l"
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="pos 9 out of range for string b'weave' at index 1"):
            sess.run(tf.substr(words, [0, 9], [1, 1]))


def test_string_join_with_scalars():
    joined = tf.string_join([["a", "b"], "-", tf.constant(["1", "2"])], separator="")
    assert joined.shape.as_list() == [2]
    with tf.Session() as sess:
        assert sess.run(joined).tolist() == [b"a-1", b"b-2"]
        assert sess.run(tf.strings.join(["x", "y"], separator="/")) == b"x/y"
