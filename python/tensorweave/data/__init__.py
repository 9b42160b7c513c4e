"""tf.data: datasets and iterators over tensorweave's C++ input pipelines (src/data)."""
