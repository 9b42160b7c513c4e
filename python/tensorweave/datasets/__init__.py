"""Data sets for the examples, read from where Debian's packages install them
(`fashion_mnist`: dataset-fashion-mnist)."""
