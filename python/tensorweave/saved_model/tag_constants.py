"""The MetaGraph tags of a SavedModel, TF 1.x's values."""

SERVING = "serve"
TRAINING = "train"
EVAL = "eval"
GPU = "gpu"
TPU = "tpu"
