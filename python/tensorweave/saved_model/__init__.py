"""tf.saved_model: SavedModelBuilder, simple_save, signature_def_utils, utils and the
constants modules (tag_constants, signature_constants) with TF 1.x's values. SavedModels
are TensorFlow's format (saved_model.pb and a V2 checkpoint of the variables)."""

from tensorweave.saved_model import signature_constants
from tensorweave.saved_model import signature_def_utils
from tensorweave.saved_model import tag_constants
from tensorweave.saved_model import utils


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None):
    """TF's: a SavedModel tagged "serve" with the predict signature of `inputs` and
    `outputs` (dicts of tensors) as its default, devices cleared."""
    from tensorweave.saved_model import builder
    signature = signature_def_utils.predict_signature_def(inputs, outputs)
    b = builder.SavedModelBuilder(export_dir)
    from tensorweave.framework import ops
    b.add_meta_graph_and_variables(
        session, tags=[tag_constants.SERVING],
        signature_def_map={signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: signature},
        assets_collection=ops.get_collection(ops.GraphKeys.ASSET_FILEPATHS),
        main_op=legacy_init_op, clear_devices=True)
    b.save()
