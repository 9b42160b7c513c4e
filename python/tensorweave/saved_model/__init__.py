"""tf.saved_model: the constants modules (tag_constants, signature_constants) with TF 1.x's
values. The builder and loader come with TensorFlow's SavedModel format (issue #33)."""
