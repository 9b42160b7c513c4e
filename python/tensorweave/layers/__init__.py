"""TF 1.x's tf.layers, in graph mode: functions that make their variables with
get_variable under a variable scope named after the layer."""
