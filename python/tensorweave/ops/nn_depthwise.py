"""tf.nn's depthwise and separable convolutions over the C++ DepthwiseConv2dNative op
(src/ops/depthwise_conv_ops.cc), with TF 1.x's signatures: depthwise_conv2d_native,
depthwise_conv2d (rate / dilations as the op's dilations) and separable_conv2d (a
depthwise convolution, then a 1x1 conv2d, as TF composes it)."""

from tensorweave import raw_ops
from tensorweave.framework import ops
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import nn_conv


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",  # noqa: A002
                            dilations=None, name=None):
    return raw_ops.DepthwiseConv2dNative(
        input=input, filter=filter, strides=list(strides), padding=padding.upper(),
        data_format=data_format, dilations=list(dilations or [1, 1, 1, 1]),
        name=name or "DepthwiseConv2dNative")


def _rate(rate, dilations, strides):
    """TF's rate / dilations: [1, r_h, r_w, 1] for the op, refused with strides > 1."""
    rate = dilations if rate is None else rate
    if rate is None:
        return [1, 1, 1, 1]
    rate = [rate, rate] if isinstance(rate, int) else list(rate)
    if len(rate) == 4:
        rate = rate[1:3]
    if any(r > 1 for r in rate) and any(s > 1 for s in list(strides)[1:3]):
        raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
    return [1, rate[0], rate[1], 1]


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None,  # noqa: A002
                     data_format=None, dilations=None):
    """input [batch, h, w, in_c] with filter [kh, kw, in_c, M]: [batch, oh, ow, in_c * M]."""
    if len(list(strides)) != 4:
        raise ValueError("strides should be of length 4")
    with ops.name_scope(name, "depthwise", [input, filter]) as scope:
        input = convert_to_tensor(input, name="tensor_in")  # noqa: A001
        filter = convert_to_tensor(filter, name="filter_in")  # noqa: A001
        return depthwise_conv2d_native(input, filter, strides, padding,
                                       data_format=data_format or "NHWC",
                                       dilations=_rate(rate, dilations, strides), name=scope)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,  # noqa: A002
                     rate=None, name=None, data_format=None, dilations=None):
    """depthwise_conv2d, then a 1x1 conv2d with pointwise_filter [1, 1, in_c * M, out_c]."""
    with ops.name_scope(name, "separable_conv2d",
                        [input, depthwise_filter, pointwise_filter]) as scope:
        input = convert_to_tensor(input, name="tensor_in")  # noqa: A001
        depthwise_filter = convert_to_tensor(depthwise_filter, name="depthwise_filter")
        pointwise_filter = convert_to_tensor(pointwise_filter, name="pointwise_filter")
        pw = pointwise_filter.shape
        if pw.ndims is not None:
            if pw.ndims != 4:
                raise ValueError("Shape must be rank 4 but is rank %d" % pw.ndims)
            if pw.as_list()[:2] != [1, 1]:
                raise ValueError("Dimension must be 1 but is %s" % pw.as_list()[0])
        depthwise = depthwise_conv2d_native(input, depthwise_filter, strides, padding,
                                            data_format=data_format or "NHWC",
                                            dilations=_rate(rate, dilations, strides),
                                            name="depthwise")
        return nn_conv.conv2d(depthwise, pointwise_filter, [1, 1, 1, 1], padding="VALID",
                              data_format=data_format or "NHWC", name=scope)
