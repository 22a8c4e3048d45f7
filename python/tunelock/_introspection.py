"""Reading Triton's and torch's objects, with nothing of tunelock's own:
an autotuner's kernel name, module, configs and key, the device's arch
tag and the driver's version. The interception (`tunelock.triton`) and
the argument checks (`tunelock._arguments`) both use it, so neither
imports the other."""
import ctypes
import hashlib


def autotuner_class():
    """Triton's `Autotuner`, or None when Triton is not installed."""
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError:
        return None
    return Autotuner


def arch_tag():
    """sm<major><minor> for the current device, or unknown off-GPU."""
    try:
        import torch
        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability()
            return f"sm{major}{minor}"
    except ImportError:
        pass
    return "unknown"


def driver_version():
    """The CUDA driver's version as the C++ backend writes it ("13.0"), from
    the driver library itself; empty where there is none."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
        version = ctypes.c_int(0)
        if driver.cuDriverGetVersion(ctypes.byref(version)) != 0:
            return ""
        return f"{version.value // 1000}.{version.value % 1000 // 10}"
    except OSError:
        return ""


def kernel_name(autotuner):
    """The underlying kernel function's name, unwrapping JIT and decorator layers."""
    return base_function(autotuner).__name__


def kernel_module(autotuner):
    """The module the kernel is defined in: scopes which kernels are pinned."""
    return getattr(base_function(autotuner), "__module__", "") or ""


def base_function(autotuner):
    fn = getattr(autotuner, "base_fn", None) or autotuner.fn
    while hasattr(fn, "fn") and not hasattr(fn, "__code__"):
        fn = fn.fn
    return fn


def code_identity(autotuner):
    """The identity of the kernel's code, "triton:<key>": Triton's own cache
    key of its JIT function (a hash of its source and of the sources of the
    functions it calls, JITFunction.cache_key), or a hash of its source
    where the function has no key; None when it has neither."""
    fn = autotuner.fn
    while not hasattr(fn, "cache_key") and not hasattr(fn, "src") and hasattr(fn, "fn"):
        fn = fn.fn  # heuristics and other wrappers around the JIT function
    try:
        key = getattr(fn, "cache_key", None)
    except Exception:  # a key Triton cannot compute here is no identity
        key = None
    if isinstance(key, str) and key:
        return "triton:" + key
    src = getattr(fn, "src", None)
    if isinstance(src, str) and src:
        return "triton:" + hashlib.sha256(src.encode()).hexdigest()
    return None


def config_data(config):
    """A Triton Config in Megatron's config form; hooks stay on the live Config."""
    data = {
        "kwargs": {name: int(value) if isinstance(value, bool) else value
                   for name, value in config.kwargs.items()},
        "num_warps": config.num_warps,
        "num_stages": config.num_stages,
        "num_ctas": getattr(config, "num_ctas", 1),
    }
    if getattr(config, "maxnreg", None) is not None:
        data["maxnreg"] = config.maxnreg
    if getattr(config, "ir_override", None) is not None:
        data["ir_override"] = config.ir_override
    return data


# The launch options a Triton config carries besides its kwargs.
LAUNCH_OPTIONS = ("num_warps", "num_ctas", "num_stages", "maxnreg")


def launch_options_filled_in():
    """The launch options the device's Triton backend fills in when a call
    leaves them out (on CUDA num_warps=4, num_ctas=1, num_stages=3), or {}
    where that cannot be read (no GPU, a Triton without these entry points).
    Reads the current device: call it once CUDA is in use, never at import."""
    try:
        from triton.compiler.compiler import make_backend
        from triton.runtime.driver import driver
        options = make_backend(driver.active.get_current_target()).parse_options({})
    except Exception:  # any failure only means: pass every option, as Triton's autotuner does
        return {}
    return {name: getattr(options, name) for name in LAUNCH_OPTIONS if hasattr(options, name)}


def launch_kwargs(config, filled_in):
    """What to pass `JITFunction.run` to launch `config`: its kwargs and the
    launch options that differ from what the backend fills in. Either way the
    same kernel is compiled (the backend parses the same options), but
    Triton writes every option passed into its cache key as a string on each
    launch, so the fewer passed, the cheaper the launch."""
    return {name: value for name, value in config.all_kwargs().items()
            if name not in filled_in or filled_in[name] != value}


def call_args(autotuner, args, kwargs):
    named = dict(zip(autotuner.arg_names, args))
    return named, {k: v for k, v in {**named, **kwargs}.items() if k in autotuner.arg_names}


def key_tuple(autotuner, args, kwargs):
    """Triton's own cache key: cheap to build on every call."""
    _, call = call_args(autotuner, args, kwargs)
    key = [call[name] for name in autotuner.keys if name in call]
    key.extend(str(value.dtype) for value in call.values() if hasattr(value, "dtype"))
    return tuple(key)


def pruned(autotuner, args, kwargs):
    """The configs Triton would benchmark for this call (its pruning hooks see
    the call's named arguments, as in Triton's run)."""
    autotuner.nargs = dict(zip(autotuner.arg_names, args))
    try:
        return autotuner.prune_configs(kwargs)
    finally:
        autotuner.nargs = None
