"""TensorFlow 1.x's API over tensorweave: `import tensorweave.compat.v1 as tf`.

Programs written for `import tensorflow as tf` (1.x, graph mode) run with only that line
changed, as far as they use what is here; docs/python.md lists it, and what is not.
"""

import types as _types

import tensorweave as _tensorweave
from tensorweave import errors
from tensorweave import raw_ops
from tensorweave.client.session import InteractiveSession, Session
from tensorweave.config import ConfigProto, GPUOptions, RunMetadata, RunOptions
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.framework.dtypes import (DType, as_dtype, bool, complex64,  # noqa: A004
                                          complex128, double, float32, float64, int8, int16,
                                          int32, int64, resource, string, uint8, uint16)
from tensorweave.framework.ops import (Graph, GraphKeys, Operation, Tensor, add_to_collection,
                                       add_to_collections, colocate_with, control_dependencies,
                                       device, get_collection, get_collection_ref,
                                       get_default_graph, get_default_session, name_scope,
                                       reset_default_graph)
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.tensor_shape import Dimension, TensorShape
from tensorweave.ops import losses as _losses
from tensorweave.ops import nn_conv as _nn_conv
from tensorweave.ops import nn_ops as _nn
from tensorweave.ops import nn_activations as _nn_act
from tensorweave.ops.clip_ops import clip_by_global_norm, clip_by_norm, global_norm
from tensorweave.ops.cwise_math import (ceil, cos, erf, floor, reciprocal, round,  # noqa: A004
                                        rsqrt, sign, sin)
from tensorweave.layers import dropout as _layers_dropout
from tensorweave.training import learning_rate_decay as _lr_decay
from tensorweave.ops.array_transforms import (broadcast_to, cumsum, expand_dims,
                                               one_hot, range, rank, reverse,  # noqa: A004
                                               reverse_v2, split, squeeze, tile, transpose)
from tensorweave.ops.array_ops import (concat, fill, gather, identity, ones, ones_like, pad,
                                       placeholder, placeholder_with_default, reshape, shape,
                                       size, slice, stack, stop_gradient, strided_slice,
                                       unstack, where, zeros, zeros_like)
from tensorweave.ops import check_ops as _check_ops
from tensorweave.ops.check_ops import (Assert, Print, assert_equal, assert_greater,
                                       assert_greater_equal, assert_less, assert_less_equal,
                                       assert_negative, assert_non_negative,
                                       assert_non_positive, assert_none_equal, assert_positive,
                                       assert_rank, check_numerics)
from tensorweave.ops.index_ops import (boolean_mask, gather_nd, scatter_nd, segment_sum,
                                       top_k as _top_k, unique, unsorted_segment_sum)
from tensorweave.ops.state_ops import (scatter_add, scatter_div, scatter_max, scatter_min,
                                       scatter_mul, scatter_sub, scatter_update)
from tensorweave.ops.control_flow_ops import group, no_op, tuple  # noqa: A004
from tensorweave.ops.data_flow_ops import FIFOQueue, QueueBase
from tensorweave.ops.gradients import gradients
from tensorweave.ops.init_ops import (constant_initializer, glorot_normal_initializer,
                                      glorot_uniform_initializer, ones_initializer,
                                      random_normal_initializer, random_uniform_initializer,
                                      truncated_normal_initializer,
                                      variance_scaling_initializer, zeros_initializer)
from tensorweave.ops import init_ops as _init_ops
from tensorweave.layers import convolutional as _layers_conv
from tensorweave.layers import core as _layers_core
from tensorweave.ops import partitioned_variables as _partitioned
from tensorweave.ops.partitioned_variables import (fixed_size_partitioner,
                                                   min_max_variable_partitioner,
                                                   variable_axis_size_partitioner)
from tensorweave.ops.variable_scope import (AUTO_REUSE, VariableScope, get_variable,
                                            get_variable_scope, variable_scope)
from tensorweave.ops.math_ops import (abs, add, add_n, argmax, cast, clip_by_value,  # noqa: A004
                                      div, divide, equal, exp, floordiv, floormod, greater,
                                      greater_equal, less, less_equal, log, logical_and,
                                      logical_not, logical_or, logical_xor, matmul, maximum,
                                      minimum, mod, multiply, negative, not_equal, pow,
                                      count_nonzero, reduce_all, reduce_any,
                                      reduce_logsumexp, reduce_max, reduce_mean, reduce_min,
                                      reduce_prod, reduce_sum, sigmoid, sqrt, square, subtract,
                                      tanh, to_float, to_int32, to_int64, truediv)
from tensorweave.ops import math_ops as _math_ops
from tensorweave.ops.random_ops import (random_normal, random_shuffle, random_uniform,
                                        truncated_normal)
from tensorweave.ops.variables import (Variable, all_variables, assign, assign_add, assign_sub,
                                       global_variables, global_variables_initializer,
                                       initialize_all_variables, is_variable_initialized,
                                       local_variables, local_variables_initializer,
                                       model_variables, report_uninitialized_variables,
                                       trainable_variables, variables_initializer)
from tensorweave.summary import summary as _summary
from tensorweave.summary import writer as _summary_writer
from tensorweave.run_config import RunConfig as _RunConfig
from tensorweave.run_config import TaskType as _TaskType
from tensorweave.run_config import TFConfigClusterResolver as _TFConfigClusterResolver
from tensorweave.platform import app, flags
from tensorweave.platform import tf_logging as logging
from tensorweave.training import basic_session_run_hooks as _hooks
from tensorweave.training import coordinator as _coordinator
from tensorweave.training import device_setter as _device_setter
from tensorweave.training import monitored_session as _monitored
from tensorweave.training import optimizer as _optimizer
from tensorweave.training import queue_runner as _queue_runner
from tensorweave.training import session_manager as _session_manager
from tensorweave.training import supervisor as _supervisor
from tensorweave.training import sync_replicas_optimizer as _sync_replicas
from tensorweave.training import saver as _saver
from tensorweave.training import session_run_hook as _session_run_hook
from tensorweave.training import training_util as _training_util
from tensorweave.training import server_lib as _server_lib
from tensorweave.training.server_lib import ClusterSpec as _ClusterSpec
from tensorweave.training.server_lib import Server as _Server
import tensorweave.saved_model as _saved_model
from tensorweave.estimator import export as _estimator_export
from tensorweave.estimator import exporter as _estimator_exporter
from tensorweave.saved_model import builder as _saved_model_builder
from tensorweave.saved_model import loader as _saved_model_loader
from tensorweave.saved_model import signature_constants as _signature_constants
from tensorweave.saved_model import signature_def_utils as _signature_def_utils
from tensorweave.saved_model import utils as _saved_model_utils
from tensorweave.saved_model import tag_constants as _tag_constants

# The TF 1.x release whose API this module follows, and tensorweave's own version beside it
# in the git version (programs print or compare tf.__version__; TF's tests read both).
__version__ = VERSION = "1.15.0"
__git_version__ = GIT_VERSION = "v1.15.0-tensorweave-" + _tensorweave.__version__
tensorweave_version = _tensorweave.__version__


def set_random_seed(seed):
    """The default graph's seed: random ops made afterwards without a seed of their own
    draw the same numbers on every run (TF 1.x's graph-level seed)."""
    get_default_graph().seed = seed

def _namespace(name, **members):
    module = _types.ModuleType(__name__ + "." + name)
    module.__dict__.update(members)
    return module


from tensorweave.ops import candidate_sampling as _sampling  # noqa: E402
nn = _namespace("nn", relu=_nn.relu, softmax=_nn.softmax, log_softmax=_nn.log_softmax,
                bias_add=_nn.bias_add, embedding_lookup=_partitioned.embedding_lookup,
                in_top_k=_nn.in_top_k, l2_loss=_nn.l2_loss,
                sigmoid_cross_entropy_with_logits=_nn.sigmoid_cross_entropy_with_logits,
                xw_plus_b=_nn.xw_plus_b, sigmoid=_nn.sigmoid,
                tanh=_nn.tanh,
                sparse_softmax_cross_entropy_with_logits=(
                    _nn.sparse_softmax_cross_entropy_with_logits),
                softmax_cross_entropy_with_logits=_nn.softmax_cross_entropy_with_logits,
                softmax_cross_entropy_with_logits_v2=_nn.softmax_cross_entropy_with_logits_v2,
                conv2d=_nn_conv.conv2d, conv2d_transpose=_nn_conv.conv2d_transpose,
                conv2d_backprop_input=_nn_conv.conv2d_backprop_input,
                conv2d_backprop_filter=_nn_conv.conv2d_backprop_filter,
                max_pool=_nn_conv.max_pool, avg_pool=_nn_conv.avg_pool,
                elu=_nn_act.elu, selu=_nn_act.selu, leaky_relu=_nn_act.leaky_relu,
                relu6=_nn_act.relu6, softplus=_nn_act.softplus, softsign=_nn_act.softsign,
                dropout=_nn_act.dropout,
                weighted_cross_entropy_with_logits=_nn_act.weighted_cross_entropy_with_logits,
                swish=_nn_act.swish, crelu=_nn_act.crelu,
                log_poisson_loss=_nn_act.log_poisson_loss,
                nce_loss=_sampling.nce_loss, sampled_softmax_loss=_sampling.sampled_softmax_loss,
                log_uniform_candidate_sampler=_sampling.log_uniform_candidate_sampler,
                uniform_candidate_sampler=_sampling.uniform_candidate_sampler,
                compute_accidental_hits=_sampling.compute_accidental_hits)
math = _namespace("math", add=add, subtract=subtract, multiply=multiply, divide=divide,
                  truediv=truediv, exp=exp, log=log, sqrt=sqrt, square=square, maximum=maximum,
                  minimum=minimum, equal=equal, not_equal=not_equal, less=less,
                  less_equal=less_equal, greater=greater, greater_equal=greater_equal,
                  negative=negative, abs=abs, floordiv=floordiv, floormod=floormod, pow=pow,
                  logical_and=logical_and, logical_or=logical_or, logical_not=logical_not,
                  logical_xor=logical_xor, reduce_sum=reduce_sum, reduce_mean=reduce_mean,
                  reduce_max=reduce_max, reduce_min=reduce_min, reduce_prod=reduce_prod,
                  reduce_all=reduce_all, reduce_any=reduce_any,
                  reduce_logsumexp=reduce_logsumexp, count_nonzero=count_nonzero,
                  argmax=argmax, sigmoid=sigmoid, tanh=tanh, add_n=add_n,
                  erf=erf, rsqrt=rsqrt, sign=sign, round=round, ceil=ceil, floor=floor,
                  reciprocal=reciprocal, cos=cos, sin=sin, softplus=_nn_act.softplus,
                  softsign=_nn_act.softsign)
math.cumsum = cumsum  # the array transforms TF 1.x also has under tf.math
from tensorweave.training import checkpoint_utils as _checkpoint_utils  # noqa: E402
train = _namespace(
    "train", exponential_decay=_lr_decay.exponential_decay,
    piecewise_constant=_lr_decay.piecewise_constant,
    polynomial_decay=_lr_decay.polynomial_decay,
    inverse_time_decay=_lr_decay.inverse_time_decay,
    natural_exp_decay=_lr_decay.natural_exp_decay, cosine_decay=_lr_decay.cosine_decay,
    ClusterSpec=_ClusterSpec, Server=_Server, ServerDef=_server_lib.ServerDef,
    ClusterDef=_server_lib.ClusterDef, JobDef=_server_lib.JobDef,
    Optimizer=_optimizer.Optimizer,
    GradientDescentOptimizer=_optimizer.GradientDescentOptimizer,
    MomentumOptimizer=_optimizer.MomentumOptimizer,
    AdagradOptimizer=_optimizer.AdagradOptimizer, AdamOptimizer=_optimizer.AdamOptimizer,
    FtrlOptimizer=_optimizer.FtrlOptimizer,
    RMSPropOptimizer=_optimizer.RMSPropOptimizer,
    SyncReplicasOptimizer=_sync_replicas.SyncReplicasOptimizer,
    get_global_step=_training_util.get_global_step,
    create_global_step=_training_util.create_global_step,
    get_or_create_global_step=_training_util.get_or_create_global_step,
    global_step=_training_util.global_step,
    assert_global_step=_training_util.assert_global_step,
    replica_device_setter=_device_setter.replica_device_setter,
    GreedyLoadBalancingStrategy=_device_setter.GreedyLoadBalancingStrategy,
    byte_size_load_fn=_device_setter.byte_size_load_fn,
    Saver=_saver.Saver, SaverDef=_saver.SaverDef, latest_checkpoint=_saver.latest_checkpoint,
    get_checkpoint_state=_saver.get_checkpoint_state,
    list_variables=_checkpoint_utils.list_variables,
    load_variable=_checkpoint_utils.load_variable,
    load_checkpoint=_checkpoint_utils.load_checkpoint,
    init_from_checkpoint=_checkpoint_utils.init_from_checkpoint,
    NewCheckpointReader=_checkpoint_utils.NewCheckpointReader,
    checkpoint_exists=_saver.checkpoint_exists,
    Coordinator=_coordinator.Coordinator, LooperThread=_coordinator.LooperThread,
    SessionRunHook=_session_run_hook.SessionRunHook,
    SessionRunArgs=_session_run_hook.SessionRunArgs,
    SessionRunContext=_session_run_hook.SessionRunContext,
    SessionRunValues=_session_run_hook.SessionRunValues,
    StopAtStepHook=_hooks.StopAtStepHook, CheckpointSaverHook=_hooks.CheckpointSaverHook,
    CheckpointSaverListener=_hooks.CheckpointSaverListener,
    StepCounterHook=_hooks.StepCounterHook, LoggingTensorHook=_hooks.LoggingTensorHook,
    SummarySaverHook=_hooks.SummarySaverHook,
    SummaryWriterCache=_summary_writer.FileWriterCache,
    NanTensorHook=_hooks.NanTensorHook, NanLossDuringTrainingError=_hooks.NanLossDuringTrainingError,
    FinalOpsHook=_hooks.FinalOpsHook, SecondOrStepTimer=_hooks.SecondOrStepTimer,
    Scaffold=_monitored.Scaffold, MonitoredSession=_monitored.MonitoredSession,
    MonitoredTrainingSession=_monitored.MonitoredTrainingSession,
    SingularMonitoredSession=_monitored.SingularMonitoredSession,
    ChiefSessionCreator=_monitored.ChiefSessionCreator,
    WorkerSessionCreator=_monitored.WorkerSessionCreator,
    SessionManager=_session_manager.SessionManager, Supervisor=_supervisor.Supervisor,
    QueueRunner=_queue_runner.QueueRunner, add_queue_runner=_queue_runner.add_queue_runner,
    start_queue_runners=_queue_runner.start_queue_runners,
    queue_runner=_namespace("train.queue_runner", QueueRunner=_queue_runner.QueueRunner,
                            add_queue_runner=_queue_runner.add_queue_runner,
                            start_queue_runners=_queue_runner.start_queue_runners))
Summary = _summary.Summary
summary = _namespace("summary", scalar=_summary.scalar, histogram=_summary.histogram,
                     Summary=_summary.Summary,
                     merge=_summary.merge, merge_all=_summary.merge_all,
                     FileWriter=_summary_writer.FileWriter,
                     FileWriterCache=_summary_writer.FileWriterCache)
layers = _namespace("layers", dense=_layers_core.dense, Dense=_layers_core.Dense,
                    conv2d=_layers_conv.conv2d, Conv2D=_layers_conv.Conv2D,
                    max_pooling2d=_layers_conv.max_pooling2d,
                    MaxPooling2D=_layers_conv.MaxPooling2D,
                    average_pooling2d=_layers_conv.average_pooling2d,
                    AveragePooling2D=_layers_conv.AveragePooling2D,
                    flatten=_layers_conv.flatten, Flatten=_layers_conv.Flatten,
                    dropout=_layers_dropout.dropout, Dropout=_layers_dropout.Dropout)
initializers = _namespace(
    "initializers", zeros=zeros_initializer, ones=ones_initializer,
    constant=constant_initializer, random_uniform=random_uniform_initializer,
    random_normal=random_normal_initializer, truncated_normal=truncated_normal_initializer,
    variance_scaling=variance_scaling_initializer, glorot_uniform=glorot_uniform_initializer,
    glorot_normal=glorot_normal_initializer, he_normal=_init_ops.he_normal,
    he_uniform=_init_ops.he_uniform)
keras = _namespace("keras", layers=_namespace(
    "keras.layers", Dense=_layers_core.Dense, Conv2D=_layers_conv.Conv2D,
    MaxPooling2D=_layers_conv.MaxPooling2D, MaxPool2D=_layers_conv.MaxPooling2D,
    AveragePooling2D=_layers_conv.AveragePooling2D, Flatten=_layers_conv.Flatten,
    Dropout=_layers_dropout.Dropout),
    initializers=initializers)
from tensorweave.estimator import estimator as _estimator  # noqa: E402
from tensorweave.estimator import inputs as _estimator_inputs  # noqa: E402
from tensorweave.estimator import model_fn as _model_fn  # noqa: E402
from tensorweave.estimator import training as _estimator_training  # noqa: E402
from tensorweave.estimator.canned import dnn as _canned_dnn  # noqa: E402
from tensorweave.estimator.canned import linear as _canned_linear  # noqa: E402
from tensorweave.estimator.canned import dnn_linear_combined as _canned_combined  # noqa: E402
from tensorweave.feature_column import feature_column as _feature_column  # noqa: E402
feature_column = _namespace(
    "feature_column", numeric_column=_feature_column.numeric_column,
    bucketized_column=_feature_column.bucketized_column,
    categorical_column_with_identity=_feature_column.categorical_column_with_identity,
    categorical_column_with_vocabulary_list=(
        _feature_column.categorical_column_with_vocabulary_list),
    categorical_column_with_vocabulary_file=(
        _feature_column.categorical_column_with_vocabulary_file),
    categorical_column_with_hash_bucket=_feature_column.categorical_column_with_hash_bucket,
    indicator_column=_feature_column.indicator_column,
    embedding_column=_feature_column.embedding_column,
    crossed_column=_feature_column.crossed_column,
    input_layer=_feature_column.input_layer, linear_model=_feature_column.linear_model)
estimator = _namespace(
    "estimator", RunConfig=_RunConfig, TaskType=_TaskType, Estimator=_estimator.Estimator,
    EstimatorSpec=_model_fn.EstimatorSpec, ModeKeys=_model_fn.ModeKeys,
    TrainSpec=_estimator_training.TrainSpec, EvalSpec=_estimator_training.EvalSpec,
    train_and_evaluate=_estimator_training.train_and_evaluate,
    DNNClassifier=_canned_dnn.DNNClassifier, DNNRegressor=_canned_dnn.DNNRegressor,
    LinearClassifier=_canned_linear.LinearClassifier,
    LinearRegressor=_canned_linear.LinearRegressor,
    DNNLinearCombinedClassifier=_canned_combined.DNNLinearCombinedClassifier,
    DNNLinearCombinedRegressor=_canned_combined.DNNLinearCombinedRegressor,
    inputs=_namespace("estimator.inputs", numpy_input_fn=_estimator_inputs.numpy_input_fn),
    export=_namespace(
        "estimator.export", ServingInputReceiver=_estimator_export.ServingInputReceiver,
        build_raw_serving_input_receiver_fn=(
            _estimator_export.build_raw_serving_input_receiver_fn),
        build_parsing_serving_input_receiver_fn=(
            _estimator_export.build_parsing_serving_input_receiver_fn),
        ExportOutput=_estimator_export.ExportOutput,
        PredictOutput=_estimator_export.PredictOutput,
        ClassificationOutput=_estimator_export.ClassificationOutput,
        RegressionOutput=_estimator_export.RegressionOutput),
    Exporter=_estimator_exporter.Exporter, LatestExporter=_estimator_exporter.LatestExporter,
    FinalExporter=_estimator_exporter.FinalExporter,
    BestExporter=_estimator_exporter.BestExporter)
contrib = _namespace(
    "contrib", learn=_namespace("contrib.learn", RunConfig=_RunConfig),
    framework=_namespace("contrib.framework",
                         get_or_create_global_step=_training_util.get_or_create_global_step,
                         get_global_step=_training_util.get_global_step,
                         create_global_step=_training_util.create_global_step))
from tensorweave import distribute as _distribute  # noqa: E402
distribute = _namespace(
    "distribute", cluster_resolver=_namespace(
        "distribute.cluster_resolver", TFConfigClusterResolver=_TFConfigClusterResolver,
        SimpleClusterResolver=_distribute.cluster_resolver.SimpleClusterResolver),
    experimental=_distribute.experimental, Server=_distribute.Server,
    ReduceOp=_distribute.ReduceOp, InputContext=_distribute.InputContext)
function = _distribute.function
random = _namespace("random", set_random_seed=set_random_seed, normal=random_normal,
                    uniform=random_uniform, truncated_normal=truncated_normal,
                    shuffle=random_shuffle,
                    log_uniform_candidate_sampler=_sampling.log_uniform_candidate_sampler,
                    uniform_candidate_sampler=_sampling.uniform_candidate_sampler)
losses = _namespace(
    "losses", Reduction=_losses.Reduction, add_loss=_losses.add_loss,
    get_losses=_losses.get_losses, get_regularization_loss=_losses.get_regularization_loss,
    get_regularization_losses=_losses.get_regularization_losses,
    get_total_loss=_losses.get_total_loss, compute_weighted_loss=_losses.compute_weighted_loss,
    absolute_difference=_losses.absolute_difference, cosine_distance=_losses.cosine_distance,
    hinge_loss=_losses.hinge_loss, huber_loss=_losses.huber_loss, log_loss=_losses.log_loss,
    mean_pairwise_squared_error=_losses.mean_pairwise_squared_error,
    mean_squared_error=_losses.mean_squared_error,
    sigmoid_cross_entropy=_losses.sigmoid_cross_entropy,
    softmax_cross_entropy=_losses.softmax_cross_entropy,
    sparse_softmax_cross_entropy=_losses.sparse_softmax_cross_entropy)
saved_model = _namespace("saved_model", tag_constants=_tag_constants,
                         signature_constants=_signature_constants,
                         builder=_saved_model_builder,
                         loader=_saved_model_loader, load=_saved_model_loader.load,
                         maybe_saved_model_directory=(
                             _saved_model_loader.maybe_saved_model_directory),
                         Builder=_saved_model_builder.SavedModelBuilder,
                         simple_save=_saved_model.simple_save,
                         signature_def_utils=_signature_def_utils,
                         utils=_saved_model_utils,
                         build_signature_def=_signature_def_utils.build_signature_def,
                         predict_signature_def=_signature_def_utils.predict_signature_def,
                         classification_signature_def=(
                             _signature_def_utils.classification_signature_def),
                         regression_signature_def=_signature_def_utils.regression_signature_def,
                         is_valid_signature=_signature_def_utils.is_valid_signature,
                         build_tensor_info=_saved_model_utils.build_tensor_info,
                         get_tensor_from_tensor_info=_saved_model_utils.get_tensor_from_tensor_info,
                         PREDICT_METHOD_NAME=_signature_constants.PREDICT_METHOD_NAME,
                         CLASSIFY_METHOD_NAME=_signature_constants.CLASSIFY_METHOD_NAME,
                         REGRESS_METHOD_NAME=_signature_constants.REGRESS_METHOD_NAME,
                         DEFAULT_SERVING_SIGNATURE_DEF_KEY=(
                             _signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY),
                         SERVING=_tag_constants.SERVING, TRAINING=_tag_constants.TRAINING)
dtypes = _dtypes
get_logger = logging.get_logger

# Indexing, selection and checks (ops/index_ops.py, ops/check_ops.py, ops/state_ops.py).
print = _check_ops.print_v2  # noqa: A001 (TF's name)
argmin = _math_ops.argmin
nn.top_k = _top_k
for _name, _fn in [("top_k", _top_k), ("argmin", argmin), ("segment_sum", segment_sum),
                   ("unsorted_segment_sum", unsorted_segment_sum)]:
    setattr(math, _name, _fn)
math.unique = unique  # also tf.unique, as in TF 1.x
debugging = _namespace(
    "debugging", Assert=Assert, check_numerics=check_numerics, assert_equal=assert_equal,
    assert_none_equal=assert_none_equal, assert_less=assert_less,
    assert_less_equal=assert_less_equal, assert_greater=assert_greater,
    assert_greater_equal=assert_greater_equal, assert_positive=assert_positive,
    assert_non_negative=assert_non_negative, assert_negative=assert_negative,
    assert_non_positive=assert_non_positive, assert_rank=assert_rank)
del _name, _fn

# Normalization (ops/nn_norm.py, layers/normalization.py).
from tensorweave.ops import nn_norm as _nn_norm  # noqa: E402
from tensorweave.layers import normalization as _layers_norm  # noqa: E402
nn.fused_batch_norm = _nn_norm.fused_batch_norm
nn.batch_normalization = _nn_norm.batch_normalization
nn.moments = _nn_norm.moments
nn.l2_normalize = math.l2_normalize = _nn_norm.l2_normalize
layers.batch_normalization = _layers_norm.batch_normalization
layers.BatchNormalization = _layers_norm.BatchNormalization
keras.layers.BatchNormalization = _layers_norm.KerasBatchNormalization
from tensorweave.ops import nn_depthwise as _nn_depthwise  # noqa: E402
nn.depthwise_conv2d = _nn_depthwise.depthwise_conv2d
nn.depthwise_conv2d_native = _nn_depthwise.depthwise_conv2d_native
nn.separable_conv2d = _nn_depthwise.separable_conv2d
nn.lrn = _nn_norm.lrn
nn.local_response_normalization = _nn_norm.local_response_normalization

# Streaming metrics (ops/metrics_impl.py).
from tensorweave.ops import metrics_impl as _metrics  # noqa: E402
metrics = _namespace(
    "metrics", accuracy=_metrics.accuracy, mean=_metrics.mean, precision=_metrics.precision,
    recall=_metrics.recall, auc=_metrics.auc, mean_iou=_metrics.mean_iou,
    true_positives=_metrics.true_positives, false_positives=_metrics.false_positives,
    true_negatives=_metrics.true_negatives, false_negatives=_metrics.false_negatives,
    mean_absolute_error=_metrics.mean_absolute_error,
    mean_squared_error=_metrics.mean_squared_error,
    root_mean_squared_error=_metrics.root_mean_squared_error)
confusion_matrix = math.confusion_matrix = _metrics.confusion_matrix

# Files (platform/gfile.py): tf.gfile's TF 1.x names and tf.io.gfile's.
from tensorweave.platform import gfile as _gfile  # noqa: E402
gfile = _namespace(
    "gfile", GFile=_gfile.GFile, Open=_gfile.Open, FastGFile=_gfile.FastGFile,
    Exists=_gfile.Exists, IsDirectory=_gfile.IsDirectory, ListDirectory=_gfile.ListDirectory,
    MkDir=_gfile.MkDir, MakeDirs=_gfile.MakeDirs, Remove=_gfile.Remove,
    DeleteRecursively=_gfile.DeleteRecursively, Rename=_gfile.Rename, Copy=_gfile.Copy,
    Glob=_gfile.Glob, Stat=_gfile.Stat, Walk=_gfile.Walk)
io = _namespace("io", gfile=_namespace(
    "io.gfile", GFile=_gfile.GFile, exists=_gfile.exists, isdir=_gfile.isdir,
    listdir=_gfile.listdir, mkdir=_gfile.mkdir, makedirs=_gfile.makedirs,
    remove=_gfile.remove, rmtree=_gfile.rmtree, rename=_gfile.rename, copy=_gfile.copy,
    glob=_gfile.glob, stat=_gfile.stat, walk=_gfile.walk))

# tf.contrib.layers, tf.contrib.slim's layers and arg_scope (layers/contrib_layers.py,
# framework/arg_scope.py).
from tensorweave.layers import contrib_layers as _contrib_layers  # noqa: E402
from tensorweave.framework import arg_scope as _arg_scope  # noqa: E402
_CONTRIB_LAYERS = {name: getattr(_contrib_layers, name) for name in (
    "fully_connected", "conv2d", "convolution2d", "max_pool2d", "avg_pool2d", "flatten",
    "dropout", "batch_norm", "xavier_initializer", "xavier_initializer_conv2d",
    "variance_scaling_initializer", "l1_regularizer", "l2_regularizer", "sum_regularizer",
    "apply_regularization")}
contrib.layers = _namespace("contrib.layers", **_CONTRIB_LAYERS)
contrib.framework.arg_scope = _arg_scope.arg_scope
contrib.framework.add_arg_scope = _arg_scope.add_arg_scope
contrib.framework.current_arg_scope = _arg_scope.current_arg_scope
contrib.slim = _namespace("contrib.slim", arg_scope=_arg_scope.arg_scope,
                          add_arg_scope=_arg_scope.add_arg_scope, **_CONTRIB_LAYERS)

# Graphs in and out (framework/importer.py, training/meta_graph.py).
from tensorweave.framework import importer as _importer  # noqa: E402
from tensorweave.training import meta_graph as _meta_graph  # noqa: E402
from tensorweave.protobuf import graph_pb2 as _graph_pb2  # noqa: E402
import_graph_def = _importer.import_graph_def
GraphDef, NodeDef = _graph_pb2.GraphDef, _graph_pb2.NodeDef
MetaGraphDef = _meta_graph.MetaGraphDef
train.export_meta_graph = _meta_graph.export_meta_graph
train.import_meta_graph = _meta_graph.import_meta_graph
train.write_graph = _meta_graph.write_graph
io.write_graph = _meta_graph.write_graph
from tensorweave.framework import graph_util as _graph_util  # noqa: E402
graph_util = _namespace(
    "graph_util", convert_variables_to_constants=_graph_util.convert_variables_to_constants,
    extract_sub_graph=_graph_util.extract_sub_graph)

# Input pipelines: records, examples, parsing, readers, queues and the queue-based
# producers and batches (lib/io/tf_record.py, ops/parsing_ops.py, ops/io_ops.py,
# training/input.py).
from tensorweave.framework import sparse_tensor as _sparse_tensor  # noqa: E402
from tensorweave.lib.io import tf_record as _tf_record  # noqa: E402
from tensorweave.ops import io_ops as _io_ops  # noqa: E402
from tensorweave.ops import parsing_ops as _parsing  # noqa: E402
from tensorweave.ops import data_flow_ops as _data_flow  # noqa: E402
from tensorweave.ops import variables as _variables  # noqa: E402
from tensorweave.protobuf import example_pb2 as _example_pb2  # noqa: E402
from tensorweave.training import input as _input  # noqa: E402
from tensorweave.ops import string_ops as _string_ops  # noqa: E402
SparseTensor, SparseTensorValue = _sparse_tensor.SparseTensor, _sparse_tensor.SparseTensorValue
sparse_tensor_to_dense = _parsing.sparse_tensor_to_dense
sparse_to_dense = _parsing.sparse_to_dense
sparse = _namespace("sparse", SparseTensor=SparseTensor, to_dense=sparse_tensor_to_dense,
                    cross=_string_ops.sparse_cross,
                    cross_hashed=_string_ops.sparse_cross_hashed)
FixedLenFeature, VarLenFeature = _parsing.FixedLenFeature, _parsing.VarLenFeature
FixedLenSequenceFeature = _parsing.FixedLenSequenceFeature
parse_example, parse_single_example = _parsing.parse_example, _parsing.parse_single_example
parse_single_sequence_example = _parsing.parse_single_sequence_example
decode_raw, decode_csv = _parsing.decode_raw, _parsing.decode_csv
string_to_number = _parsing.string_to_number
string_split, substr = _string_ops.string_split, _string_ops.substr
string_join = _string_ops.string_join
string_to_hash_bucket_fast = _string_ops.string_to_hash_bucket_fast
as_string = _string_ops.as_string
strings = _namespace("strings", substr=substr, join=string_join, to_number=string_to_number,
                     to_hash_bucket_fast=string_to_hash_bucket_fast, as_string=as_string)
ReaderBase, TFRecordReader = _io_ops.ReaderBase, _io_ops.TFRecordReader
TextLineReader, WholeFileReader = _io_ops.TextLineReader, _io_ops.WholeFileReader
FixedLengthRecordReader = _io_ops.FixedLengthRecordReader
read_file, write_file = _io_ops.read_file, _io_ops.write_file
RandomShuffleQueue, PaddingFIFOQueue = _data_flow.RandomShuffleQueue, _data_flow.PaddingFIFOQueue
PriorityQueue = _data_flow.PriorityQueue
count_up_to = _variables.count_up_to
_RECORDS = dict(TFRecordWriter=_tf_record.TFRecordWriter,
                tf_record_iterator=_tf_record.tf_record_iterator,
                TFRecordOptions=_tf_record.TFRecordOptions,
                TFRecordCompressionType=_tf_record.TFRecordCompressionType)
python_io = _namespace("python_io", **_RECORDS)
for _name, _value in dict(_RECORDS, parse_example=parse_example,
                          parse_single_example=parse_single_example,
                          FixedLenFeature=FixedLenFeature, VarLenFeature=VarLenFeature,
                          FixedLenSequenceFeature=FixedLenSequenceFeature,
                          decode_raw=decode_raw, decode_csv=decode_csv, read_file=read_file,
                          write_file=write_file).items():
    setattr(io, _name, _value)
for _name in ("Example", "SequenceExample", "Features", "Feature", "FeatureList",
              "FeatureLists", "BytesList", "FloatList", "Int64List"):
    setattr(train, _name, getattr(_example_pb2, _name))
for _name in ("limit_epochs", "input_producer", "string_input_producer", "range_input_producer",
              "slice_input_producer", "batch", "batch_join", "shuffle_batch",
              "shuffle_batch_join"):
    setattr(train, _name, getattr(_input, _name))
del _name, _value

# tf.data (data/): datasets and iterators over the C++ pipelines of src/data.
from tensorweave.data import dataset_ops as _dataset_ops  # noqa: E402
from tensorweave.data import experimental as _data_experimental  # noqa: E402
from tensorweave.data import iterator_ops as _iterator_ops  # noqa: E402
from tensorweave.data import readers as _data_readers  # noqa: E402
data = _namespace(
    "data", Dataset=_dataset_ops.Dataset, TFRecordDataset=_data_readers.TFRecordDataset,
    TextLineDataset=_data_readers.TextLineDataset,
    FixedLengthRecordDataset=_data_readers.FixedLengthRecordDataset,
    Iterator=_iterator_ops.Iterator,
    make_one_shot_iterator=_iterator_ops.make_one_shot_iterator,
    make_initializable_iterator=_iterator_ops.make_initializable_iterator,
    get_output_types=_iterator_ops.get_output_types,
    get_output_shapes=_iterator_ops.get_output_shapes,
    experimental=_namespace("data.experimental", AUTOTUNE=_data_experimental.AUTOTUNE,
                            shuffle_and_repeat=_data_experimental.shuffle_and_repeat,
                            map_and_batch=_data_experimental.map_and_batch,
                            parallel_interleave=_data_experimental.parallel_interleave,
                            ignore_errors=_data_experimental.ignore_errors,
                            unbatch=_data_experimental.unbatch,
                            sample_from_datasets=_data_experimental.sample_from_datasets,
                            make_saveable_from_iterator=(
                                _data_experimental.make_saveable_from_iterator)))

import sys as _sys  # noqa: E402

# `tf.compat.v1.Session` inside programs that already import compat.v1 as tf.
compat = _namespace("compat", v1=_sys.modules[__name__])

# Names of TF 1.x still to come raise AttributeError naming the issue that brings them.
from tensorweave.compat.v1 import _coming  # noqa: E402

_coming.attach(_sys.modules[__name__], "")
for _path, _module in [("nn", nn), ("math", math), ("train", train), ("summary", summary),
                       ("layers", layers), ("initializers", initializers), ("keras", keras),
                       ("estimator", estimator), ("feature_column", feature_column),
                       ("contrib", contrib),
                       ("contrib.learn", contrib.learn),
                       ("contrib.framework", contrib.framework), ("distribute", distribute),
                       ("saved_model", saved_model), ("losses", losses), ("random", random),
                       ("metrics", metrics), ("io", io), ("sparse", sparse),
                       ("python_io", python_io), ("data", data),
                       ("data.experimental", data.experimental), ("strings", strings)]:
    _coming.attach(_module, _path)
del _path, _module
