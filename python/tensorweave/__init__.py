"""tensorweave: distributed dataflow programs in the model of TensorFlow 1.x.

`import tensorweave.compat.v1 as tf` gives TF 1.x's names over tensorweave's C++ runtime
(docs/python.md says what is there). `tensorweave.raw_ops` has every registered op."""

__version__ = "0.1.0"
