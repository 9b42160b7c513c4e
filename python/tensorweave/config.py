"""ConfigProto and RunOptions: the fields of TF 1.x's protos that this runtime honours, as
plain objects (keyword arguments or attribute assignment). Fields TF has and this runtime
ignores (GPU options and the like) are accepted and kept, so programs that set them run."""


class _Message:
    _fields = {}

    def __init__(self, **kwargs):
        for name, default in self._fields.items():
            setattr(self, name, default() if callable(default) else default)
        for name, value in kwargs.items():
            setattr(self, name, value)

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, ", ".join(
            "%s=%r" % (k, getattr(self, k)) for k in self._fields if getattr(self, k)))


class GPUOptions(_Message):
    _fields = {"allow_growth": False, "per_process_gpu_memory_fraction": 0.0,
               "visible_device_list": ""}


class ConfigProto(_Message):
    _fields = {"device_filters": list, "intra_op_parallelism_threads": 0,
               "inter_op_parallelism_threads": 0, "operation_timeout_in_ms": 0,
               "isolate_session_state": False, "allow_soft_placement": False,
               "log_device_placement": False, "device_count": dict, "gpu_options": GPUOptions}

    def _session_options(self):
        """The options of the C++ session this config asks for."""
        threads = max(self.intra_op_parallelism_threads, self.inter_op_parallelism_threads, 0)
        return {"num_threads": threads, "device_filters": list(self.device_filters),
                "isolate_session": bool(self.isolate_session_state),
                "operation_timeout_ms": int(self.operation_timeout_in_ms or 0)}


class RunOptions(_Message):
    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3
    _fields = {"timeout_in_ms": 0, "trace_level": 0}


class RunMetadata(_Message):
    _fields = {}
