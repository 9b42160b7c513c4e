"""Compatibility namespaces: `tensorweave.compat.v1` is TensorFlow 1.x's API."""
