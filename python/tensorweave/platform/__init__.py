"""TF 1.x's platform modules, pure Python: `flags` (tf.flags, tf.app.flags), `app`
(tf.app.run) and `tf_logging` (tf.logging)."""
