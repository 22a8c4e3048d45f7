"""Every kernel launch of this process, as `tunelock watch` records it.

`tunelock watch -- python train.py` needs no change to the program: the CUDA
driver loads the watch library (libtunelock_watch.so) into it. A program
marks its steps with `step()` so compare names the step where ranks or runs
part, or starts the watch itself with `start()`. Every function here is
safe without a watch: it does nothing and says so by its result."""
import ctypes
import os
from typing import Optional

_LIBRARY_NAME = "libtunelock_watch.so"
_library: Optional[ctypes.CDLL] = None


def _candidates():
    for variable in ("CUDA_INJECTION64_PATH", "TUNELOCK_WATCH_LIBRARY"):
        if os.environ.get(variable):
            yield os.environ[variable]
    yield os.path.join(os.path.dirname(os.path.abspath(__file__)), _LIBRARY_NAME)


def _loaded() -> Optional[ctypes.CDLL]:
    """The watch library when this process already loaded it (RTLD_NOLOAD)."""
    global _library
    if _library is None:
        for path in _candidates():
            try:
                _library = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
                break
            except OSError:
                continue
        if _library is not None:
            _library.tunelock_watch_check_digest.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
            _library.tunelock_watch_start.argtypes = [ctypes.c_char_p]
    return _library


def start(prefix: Optional[str] = None) -> bool:
    """Watch this process from now on, writing `<prefix>.rank<N>.launches.json`
    at exit (prefix: TUNELOCK_WATCH_OUT, else "tunelock-watch"). False when
    launches cannot be observed (no watch library, or another CUPTI subscriber
    such as the PyTorch profiler holds CUPTI; the reason is printed once)."""
    library = _loaded()
    if library is None:
        path = next((p for p in _candidates() if os.path.isfile(p)), None)
        if path is None:
            raise FileNotFoundError(
                "tunelock.watch.start: libtunelock_watch.so not found (it is built where the "
                "CUDA toolkit's CUPTI is installed); set TUNELOCK_WATCH_LIBRARY to its path")
        ctypes.CDLL(path)  # loaded now, and found as loaded below
        library = _loaded()
    return library.tunelock_watch_start(prefix.encode() if prefix else None) == 0


def active() -> bool:
    """True while launches are being recorded."""
    library = _loaded()
    return bool(library and library.tunelock_watch_active())


def step() -> None:
    """Closes the current step: compare names the first step where logs differ."""
    library = _loaded()
    if library is not None:
        library.tunelock_watch_step()


def flush() -> bool:
    """Writes the launch log now (it is written at exit too). False without a watch."""
    library = _loaded()
    return bool(library is not None and library.tunelock_watch_flush() == 0)
