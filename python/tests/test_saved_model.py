"""SavedModels written by tf.saved_model's builder and simple_save, read back by an
independent reader of the published formats (saved_model.proto's field numbers, and the
V2 checkpoint of the variables)."""

import os

import numpy as np
import pytest

import tensorweave.compat.v1 as tf
from tf_file_readers import proto_fields, read_table

DT_FLOAT, DT_STRING = 1, 7
# The ops a TensorFlow 1.x build registers that this model's export may use.
TENSORFLOW_OPS = {"Placeholder", "VarHandleOp", "ReadVariableOp", "MatMul", "BiasAdd", "Relu",
                  "Softmax", "ArgMax", "Const", "PlaceholderWithDefault", "SaveV2", "Identity",
                  "RestoreV2", "AssignVariableOp", "NoOp"}


def mlp():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    h = tf.layers.dense(x, 8, activation=tf.nn.relu)
    logits = tf.layers.dense(h, 3)
    probs = tf.nn.softmax(logits, name="probs")
    classes = tf.argmax(logits, 1, name="classes")
    # What training adds stays behind (gradients, the optimizer's updates); its variables
    # are saved, as TensorFlow saves every global variable.
    loss = tf.reduce_mean(tf.square(logits))
    step = tf.train.get_or_create_global_step()
    tf.train.AdamOptimizer(0.1).minimize(loss, global_step=step)
    return x, probs, classes


def strings(values):
    return [v.decode() for v in values]


def node_map(graph_def):
    nodes = {}
    for raw in graph_def.get(1, []):
        f = proto_fields(raw)
        nodes[f[1][0].decode()] = {"op": f[2][0].decode(), "inputs": strings(f.get(3, []))}
    return nodes


def test_simple_save_writes_tensorflows_layout_and_messages(tmp_path):
    export_dir = str(tmp_path / "model" / "1")
    x, probs, classes = mlp()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel = sess.run(tf.get_default_graph().get_tensor_by_name("dense/kernel:0"))
        tf.saved_model.simple_save(sess, export_dir, inputs={"x": x},
                                   outputs={"probs": probs, "classes": classes})
    assert sorted(os.listdir(export_dir)) == ["saved_model.pb", "variables"]
    assert sorted(os.listdir(os.path.join(export_dir, "variables"))) == [
        "variables.data-00000-of-00001", "variables.index"]

    model = proto_fields(open(os.path.join(export_dir, "saved_model.pb"), "rb").read())
    assert model[1] == [1] and len(model[2]) == 1  # schema version, one MetaGraphDef
    meta = proto_fields(model[2][0])
    assert strings(proto_fields(meta[1][0])[4]) == ["serve"]  # meta_info_def.tags
    nodes = node_map(proto_fields(meta[2][0]))
    assert {n["op"] for n in nodes.values()} <= TENSORFLOW_OPS
    assert nodes["dense/kernel"]["op"] == "VarHandleOp"
    assert not any(name.startswith("gradients/") or name.startswith("Adam") for name in nodes)
    for name, node in nodes.items():  # a closed graph: every input is there
        for i in node["inputs"]:
            assert i.lstrip("^").split(":")[0] in nodes, (name, i)
    saver = proto_fields(meta[3][0])
    assert strings(saver[1] + saver[2] + saver[3]) == [
        "save/Const:0", "save/control_dependency:0", "save/restore_all"]
    signatures = {}
    for entry in meta[5]:  # map<string, SignatureDef>: key 1, value 2
        e = proto_fields(entry)
        signatures[e[1][0].decode()] = proto_fields(e[2][0])
    default = signatures["serving_default"]
    assert default[3] == [b"tensorflow/serving/predict"]
    inputs = {proto_fields(e)[1][0].decode(): proto_fields(proto_fields(e)[2][0])
              for e in default[1]}
    assert inputs["x"][1] == [b"x:0"] and inputs["x"][2] == [DT_FLOAT]
    outputs = {proto_fields(e)[1][0].decode() for e in default[2]}
    assert outputs == {"probs", "classes"}

    # The variables: TensorFlow's checkpoint, the model's values in it (the optimizer's too,
    # as TensorFlow saves every global variable).
    table = dict(read_table(os.path.join(export_dir, "variables", "variables.index")))
    entry = proto_fields(table[b"dense/kernel"])
    data = open(os.path.join(export_dir, "variables", "variables.data-00000-of-00001"),
                "rb").read()
    offset, size = entry.get(4, [0])[0], entry[5][0]
    np.testing.assert_array_equal(
        np.frombuffer(data[offset:offset + size], np.float32).reshape(4, 8), kernel)
    assert b"global_step" in table


def test_the_builder_keeps_several_meta_graphs_and_checks_its_order(tmp_path):
    export_dir = str(tmp_path / "built")
    x, probs, classes = mlp()
    signature = tf.saved_model.predict_signature_def({"x": x}, {"probs": probs})
    builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
    with pytest.raises(AssertionError, match="add_meta_graph_and_variables"):
        builder.add_meta_graph(["eval"])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        builder.add_meta_graph_and_variables(sess, ["serve"], {"predict": signature})
        builder.add_meta_graph(["eval", "gpu"], {"predict": signature})
    assert builder.save() == os.path.join(export_dir, "saved_model.pb").encode()
    model = proto_fields(open(os.path.join(export_dir, "saved_model.pb"), "rb").read())
    assert [strings(proto_fields(proto_fields(m)[1][0])[4]) for m in model[2]] == [
        ["serve"], ["eval", "gpu"]]
    with pytest.raises(AssertionError, match="already exists, and isn't empty"):
        tf.saved_model.builder.SavedModelBuilder(export_dir)


def test_an_op_tensorflow_lacks_is_refused_by_name(tmp_path):
    x = tf.placeholder(tf.float32, [None], name="angles")
    wave = tf.sin(x, name="wave")  # not (yet) in the table of ops written for TensorFlow
    with tf.Session() as sess:
        with pytest.raises(tf.errors.UnimplementedError, match="node wave: op Sin"):
            tf.saved_model.simple_save(sess, str(tmp_path / "m"), {"angles": x}, {"wave": wave})


def test_signature_helpers_check_as_tensorflow_does():
    examples = tf.placeholder(tf.string, [None], name="examples")
    scores = tf.placeholder(tf.float32, [None, 3], name="scores")
    with pytest.raises(ValueError, match="Prediction inputs cannot be None or empty."):
        tf.saved_model.predict_signature_def({}, {"s": scores})
    with pytest.raises(ValueError, match="Classification examples must be a string Tensor."):
        tf.saved_model.classification_signature_def(scores, None, scores)
    with pytest.raises(ValueError, match="Regression predictions must be a float Tensor."):
        tf.saved_model.regression_signature_def(examples, examples)
    sig = tf.saved_model.classification_signature_def(examples, None, scores)
    assert sig.method_name == "tensorflow/serving/classify"
    assert sig.inputs["inputs"].name == "examples:0"
    assert sorted(sig.outputs) == ["scores"]
    assert tf.saved_model.is_valid_signature(sig)


def test_a_saved_model_loads_back_and_predicts_as_the_training_session(tmp_path):
    export_dir = str(tmp_path / "roundtrip")
    batch = np.random.RandomState(0).rand(5, 4).astype(np.float32)
    with tf.Graph().as_default():
        x, probs, classes = mlp()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            want_probs, want_classes = sess.run([probs, classes], {x: batch})
            tf.saved_model.simple_save(sess, export_dir, {"x": x},
                                       {"probs": probs, "classes": classes})
    with tf.Graph().as_default() as graph:
        with tf.Session() as sess:
            meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
            sig = meta.signature_def["serving_default"]
            assert sig.method_name == "tensorflow/serving/predict"
            assert sig.inputs["x"].tensor_shape.as_list() == [None, 4]
            feeds = {graph.get_tensor_by_name(sig.inputs["x"].name): batch}
            got_probs, got_classes = sess.run(
                [graph.get_tensor_by_name(sig.outputs["probs"].name),
                 graph.get_tensor_by_name(sig.outputs["classes"].name)], feeds)
            # The model's own saver subgraph saves too (SaveV2, TensorFlow's format).
            resaved = str(tmp_path / "resaved")
            sess.run(meta.saver_def.filename_tensor_name.replace("Const", "control_dependency"),
                     {meta.saver_def.filename_tensor_name: resaved})
            kernel = sess.run("dense/kernel/read:0")
    np.testing.assert_array_equal(tf.train.load_variable(resaved, "dense/kernel"), kernel)
    np.testing.assert_allclose(got_probs, want_probs, rtol=1e-6)
    np.testing.assert_array_equal(got_classes, want_classes)


def test_loading_names_missing_tags_and_directories(tmp_path):
    export_dir = str(tmp_path / "tagged")
    x, probs, _ = mlp()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"probs": probs})
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(RuntimeError, match="MetaGraphDef associated with tags train"):
            tf.saved_model.loader.load(sess, ["train"], export_dir)
        with pytest.raises(IOError, match="SavedModel file does not exist"):
            tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "nothing"))
    assert tf.saved_model.loader.maybe_saved_model_directory(export_dir)


def test_a_text_saved_model_with_fields_this_reader_lacks_loads(tmp_path):
    export_dir = str(tmp_path / "text")
    x, probs, _ = mlp()
    signature = tf.saved_model.predict_signature_def({"x": x}, {"probs": probs})
    builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        want = sess.run(probs, {x: np.ones([1, 4], np.float32)})
        builder.add_meta_graph_and_variables(sess, ["serve"], {"serving_default": signature})
    path = builder.save(as_text=True).decode()
    assert path.endswith("saved_model.pbtxt")
    # TensorFlow writes fields tensorweave does not declare (stripped_op_list, ...).
    text = open(path).read().replace("meta_info_def {",
                                     "meta_info_def {\n    stripped_op_list { }", 1)
    open(path, "w").write(text)
    with tf.Graph().as_default() as graph, tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        got = sess.run(graph.get_tensor_by_name(meta.signature_def["serving_default"]
                                                .outputs["probs"].name),
                       {graph.get_tensor_by_name("x:0"): np.ones([1, 4], np.float32)})
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_assets_are_copied_and_fed_to_the_main_op_at_load(tmp_path):
    # A vocabulary file as an asset: the export copies it under assets/, and the loader
    # feeds its new place to the main op, which reads it (the original is gone by then).
    vocabulary = tmp_path / "vocab.txt"
    vocabulary.write_text("alpha\nbeta\n")
    export_dir = str(tmp_path / "with_assets")
    path = tf.constant(str(vocabulary), name="vocabulary_path")
    tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, path)
    text = tf.Variable("", name="text")
    main_op = tf.group(tf.assign(text, tf.read_file(path)))
    x = tf.placeholder(tf.string, [None], name="x")
    joined = tf.identity(text.read_value(), name="joined")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"vocabulary": joined},
                                   legacy_init_op=main_op)
    vocabulary.unlink()
    assert open(os.path.join(export_dir, "assets", "vocab.txt")).read() == "alpha\nbeta\n"
    model = proto_fields(open(os.path.join(export_dir, "saved_model.pb"), "rb").read())
    asset = proto_fields(proto_fields(model[2][0])[6][0])  # MetaGraphDef.asset_file_def
    assert asset[2] == [b"vocab.txt"]
    assert proto_fields(asset[1][0])[1] == [b"vocabulary_path:0"]
    with tf.Graph().as_default() as graph, tf.Session() as sess:
        tf.saved_model.loader.load(sess, ["serve"], export_dir)
        assert sess.run(graph.get_tensor_by_name("joined:0")) == b"alpha\nbeta\n"


def test_a_graph_using_an_assignments_value_is_refused(tmp_path):
    v = tf.Variable(1.0, name="v")
    doubled = tf.assign(v, 2.0) * 3.0
    x = tf.placeholder(tf.float32, [None], name="x")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.UnimplementedError, match="takes the value of Assign"):
            tf.saved_model.simple_save(sess, str(tmp_path / "m"), {"x": x}, {"d": doubled})
