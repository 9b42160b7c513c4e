"""TF 1.x's op functions (array, math, nn, random, state, queues) over raw_ops."""
