"""tf.nn's convolutions and pools over the C++ ops (tensorweave/ops/nn_ops.h): conv2d,
conv2d_transpose, conv2d_backprop_input/filter, max_pool and avg_pool, with TF 1.x's
signatures. The arguments are passed through as the ops' attributes; the C++ ops check
them (TF's messages) and compute the shapes."""

from tensorweave import raw_ops
from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor


def _four(value, name):
    """TF's _get_sequence for NHWC: an int, or 1, 2 or 4 entries -> [1, h, w, 1]."""
    if isinstance(value, int):
        return [1, value, value, 1]
    value = list(value)
    if len(value) == 1:
        return [1, value[0], value[0], 1]
    if len(value) == 2:
        return [1, value[0], value[1], 1]
    if len(value) == 4:
        return value
    raise ValueError("%s should be of length 1, 2 or 4. Received: %s of length %d"
                     % (name, value, len(value)))


def _padding_attrs(padding):
    """padding as TF takes it: "SAME", "VALID", or explicit [[0, 0], [t, b], [l, r], [0, 0]]."""
    if isinstance(padding, str):
        return {"padding": padding.upper()}
    flat = [int(p) for pair in padding for p in pair]
    return {"padding": "EXPLICIT", "explicit_paddings": flat}


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,  # noqa: A002
           data_format="NHWC", dilations=None, name=None, filters=None):
    filter = filters if filter is None else filter
    return raw_ops.Conv2D(input=input, filter=filter, strides=_four(strides, "strides"),
                          dilations=_four(dilations or 1, "dilations"),
                          use_cudnn_on_gpu=use_cudnn_on_gpu, data_format=data_format,
                          name=name or "Conv2D", **_padding_attrs(padding))


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None,  # noqa: A002
                          padding=None, use_cudnn_on_gpu=True, data_format="NHWC",
                          dilations=None, name=None, filters=None):
    filter = filters if filter is None else filter
    return raw_ops.Conv2DBackpropInput(
        input_sizes=input_sizes, filter=filter, out_backprop=out_backprop,
        strides=_four(strides, "strides"), dilations=_four(dilations or 1, "dilations"),
        use_cudnn_on_gpu=use_cudnn_on_gpu, data_format=data_format,
        name=name or "Conv2DBackpropInput", **_padding_attrs(padding))


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           use_cudnn_on_gpu=True, data_format="NHWC", dilations=None,
                           name=None):
    return raw_ops.Conv2DBackpropFilter(
        input=input, filter_sizes=filter_sizes, out_backprop=out_backprop,
        strides=_four(strides, "strides"), dilations=_four(dilations or 1, "dilations"),
        use_cudnn_on_gpu=use_cudnn_on_gpu, data_format=data_format,
        name=name or "Conv2DBackpropFilter", **_padding_attrs(padding))


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None,  # noqa: A002
                     padding="SAME", data_format="NHWC", name=None, input=None,  # noqa: A002
                     filters=None, dilations=None):
    """The gradient of conv2d with respect to its input, as a layer: value [batch, h, w,
    out_channels] and filter [kh, kw, out_channels_of_result, in_channels_of_value]."""
    value = input if value is None else value
    filter = filters if filter is None else filter
    with ops.name_scope(name, "conv2d_transpose", [value, filter, output_shape]) as scope:
        output_shape = convert_to_tensor(output_shape, name="output_shape")
        return conv2d_backprop_input(output_shape, filter, value, strides, padding,
                                     data_format=data_format, dilations=dilations, name=scope)


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    value = input if value is None else value
    return raw_ops.MaxPool(input=value, ksize=_four(ksize, "ksize"),
                           strides=_four(strides, "strides"), padding=padding.upper(),
                           data_format=data_format, name=name or "MaxPool")


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    value = input if value is None else value
    return raw_ops.AvgPool(value=value, ksize=_four(ksize, "ksize"),
                           strides=_four(strides, "strides"), padding=padding.upper(),
                           data_format=data_format, name=name or "AvgPool")
