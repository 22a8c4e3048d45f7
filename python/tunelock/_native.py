"""The engine's C ABI (libtunelock_c.so) through ctypes.

ctypes is part of the standard library and the ABI is plain C, so the
same library serves every Python version. The library is found through
TUNELOCK_LIBRARY, else beside this file (where the build and
`cmake --install` put it).
"""
import atexit
import ctypes
import json
import logging
import os
import re
import sys

_LIBRARY_NAME = "libtunelock_c.so"


class TunelockError(Exception):
    """An error from the engine: what, where and how to fix, as it words them."""


GATHER_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_char),
                             ctypes.c_size_t, ctypes.c_void_p)

ALL_REDUCE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64),
                                 ctypes.c_size_t, ctypes.c_int)

LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)

# tunelock_call_runner (c_api.h): how a face runs one call's candidates.
RUNNER_TIME_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64,
                                  ctypes.POINTER(ctypes.c_double), ctypes.c_void_p, ctypes.c_size_t)
RUNNER_RUN_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                                 ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t)
RUNNER_STEP_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
RUNNER_ROWS_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                  ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                                  ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t)


class CallRunnerStruct(ctypes.Structure):
    _fields_ = [("context", ctypes.c_void_p), ("has_outputs", ctypes.c_int),
                ("capturing", ctypes.c_int), ("runs_candidates", ctypes.c_int),
                ("time", RUNNER_TIME_FN), ("run_outputs", RUNNER_RUN_FN),
                ("use_second_input", RUNNER_STEP_FN), ("put_back", RUNNER_STEP_FN),
                ("time_briefly", RUNNER_TIME_FN), ("batch_dim", ctypes.c_char_p),
                ("batch_rows", ctypes.c_int64), ("run_first_rows", RUNNER_ROWS_FN)]


_OUT = ctypes.POINTER(ctypes.c_char_p)
_SIGNATURES = {
    "tunelock_version": ([], ctypes.c_char_p),
    "tunelock_last_error": ([], ctypes.c_char_p),
    "tunelock_free": ([ctypes.c_void_p], None),
    "tunelock_policy_resolve": ([ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p], ctypes.c_int),
    "tunelock_install": ([ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p], ctypes.c_int),
    "tunelock_installed_policy": ([ctypes.c_void_p], ctypes.c_int),
    "tunelock_observes": ([ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)],
                          ctypes.c_int),
    "tunelock_tuning_key": ([ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p], ctypes.c_int),
    "tunelock_signature": ([ctypes.c_char_p, ctypes.c_void_p], ctypes.c_int),
    "tunelock_call_plan": ([ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64, ctypes.c_void_p],
                           ctypes.c_int),
    "tunelock_first_call": ([ctypes.c_char_p] * 5 + [ctypes.c_int64, ctypes.c_int64,
                                                     ctypes.c_char_p,
                                                     ctypes.POINTER(CallRunnerStruct),
                                                     ctypes.c_void_p], ctypes.c_int),
    "tunelock_enumerate": ([ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64], ctypes.c_int),
    "tunelock_count_audited_call": ([ctypes.c_int64, ctypes.c_int64], ctypes.c_int),
    "tunelock_autotune_configs": ([ctypes.c_char_p, ctypes.c_void_p], ctypes.c_int),
    "tunelock_audit_report": ([ctypes.c_char_p, ctypes.c_void_p], ctypes.c_int),
    "tunelock_table_invariance": ([ctypes.c_char_p, ctypes.c_void_p], ctypes.c_int),
    "tunelock_set_log_sink": ([LOG_FN, ctypes.c_void_p], ctypes.c_int),
    "tunelock_set_device": ([ctypes.c_char_p], ctypes.c_int),
    "tunelock_choice_log": ([ctypes.c_void_p], ctypes.c_int),
    "tunelock_choice_digest": ([ctypes.c_void_p], ctypes.c_int),
    "tunelock_choice_generation": ([ctypes.POINTER(ctypes.c_uint64)], ctypes.c_int),
    "tunelock_flush": ([ctypes.c_char_p], ctypes.c_int),
    "tunelock_gather_add": ([ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t], ctypes.c_int),
    "tunelock_verify": ([ctypes.c_int64, ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                         ctypes.POINTER(ctypes.c_int), GATHER_FN, ctypes.c_void_p,
                         ctypes.POINTER(ctypes.c_int)], ctypes.c_int),
    "tunelock_verify_ucx": ([ctypes.c_int64, ctypes.POINTER(ctypes.c_int)], ctypes.c_int),
    "tunelock_verify_due": ([ctypes.c_int64, ctypes.POINTER(ctypes.c_int)], ctypes.c_int),
    "tunelock_verify_group": ([ctypes.c_int64, ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                               ctypes.POINTER(ctypes.c_int), GATHER_FN, ALL_REDUCE_FN,
                               ctypes.c_void_p, ctypes.POINTER(ctypes.c_int),
                               ctypes.POINTER(ctypes.c_int)], ctypes.c_int),
    "tunelock_choose": ([ctypes.c_char_p, ctypes.c_void_p], ctypes.c_int),
    "tunelock_merge": ([ctypes.c_char_p, ctypes.c_void_p], ctypes.c_int),
    "tunelock_report": ([ctypes.c_char_p, ctypes.c_void_p], ctypes.c_int),
    "tunelock_table_coverage": ([ctypes.c_char_p, ctypes.c_void_p], ctypes.c_int),
    "tunelock_file_kind": ([ctypes.c_char_p, ctypes.c_void_p], ctypes.c_int),
    "tunelock_table_json": ([ctypes.c_char_p, ctypes.c_void_p], ctypes.c_int),
    "tunelock_table_convert": ([ctypes.c_char_p, ctypes.c_char_p], ctypes.c_int),
    "tunelock_import": ([ctypes.c_char_p] * 3 + [ctypes.POINTER(ctypes.c_int64)], ctypes.c_int),
    "tunelock_export": ([ctypes.c_char_p] * 2 + [ctypes.POINTER(ctypes.c_int64)], ctypes.c_int),
}


def _load():
    path = os.environ.get("TUNELOCK_LIBRARY") or os.path.join(os.path.dirname(__file__),
                                                             _LIBRARY_NAME)
    try:
        library = ctypes.CDLL(path)
    except OSError as error:
        raise TunelockError(f"cannot load the tunelock engine library {path}: {error} "
                            "(build tunelock, or set TUNELOCK_LIBRARY to libtunelock_c.so)") from None
    for name, (arguments, result) in _SIGNATURES.items():
        function = getattr(library, name)
        function.argtypes = arguments
        function.restype = result
    return library


lib = _load()


# The engine's messages go to Python's logging, under the logger "tunelock",
# so handlers, filters and pytest's caplog see (and can silence) them. With
# no handler configured anywhere they are printed to stderr as the engine
# prints them, so nothing is lost by default.
logger = logging.getLogger("tunelock")
_LEVELS = {0: logging.DEBUG, 1: logging.DEBUG, 2: logging.INFO, 3: logging.WARNING,
           4: logging.ERROR, 5: logging.CRITICAL}
_LEVEL_NAMES = {0: "trace", 1: "debug", 2: "info", 3: "warning", 4: "error", 5: "critical"}


def say(level, message):
    """Logs through "tunelock", or prints when logging is not set up."""
    if logger.hasHandlers():
        logger.log(level, message)
    elif level >= (logger.level or logging.INFO):  # info and up unless a level was set
        print(f"tunelock: {logging.getLevelName(level).lower()}: {message}", file=sys.stderr)


@LOG_FN
def _engine_log(level, message, _user):
    try:
        say(_LEVELS.get(level, logging.WARNING), message.decode("utf-8", "replace"))
    except Exception:  # a logging failure must never unwind through the engine
        pass


def _restore_stderr_log():
    lib.tunelock_set_log_sink(LOG_FN(), None)  # before the interpreter goes away


lib.tunelock_set_log_sink(_engine_log, None)
atexit.register(_restore_stderr_log)


def encode(text):
    """Text as the C ABI takes it. The public functions check their arguments
    first (tunelock._arguments) and name them; this is the last line: a NUL
    byte would end the C string early, so it never gets past here."""
    if text is None:
        return None
    data = str(text).encode("utf-8")
    if b"\0" in data:
        raise ValueError("tunelock: a string argument contains a NUL byte; C strings end there")
    return data


# The JSON library's own exception text ("[json.exception.type_error.302] type
# must be boolean, but is string") names neither the function nor the argument.
_JSON_EXCEPTION = re.compile(r"\[json\.exception[^\]]*\]\s*")


def engine_message(message, where=None):
    """The engine's message as users see it: unchanged, except that the JSON
    library's exception tags are removed and the message is then prefixed
    with `where` ("tunelock.<function>: <argument>")."""
    if "[json.exception." not in message:
        return message
    cleaned = _JSON_EXCEPTION.sub("", message).replace("[json.exception", "[")
    return f"{where}: {cleaned}" if where else cleaned


def check(status, where=None):
    if status != 0:
        raise TunelockError(engine_message(lib.tunelock_last_error().decode("utf-8", "replace"),
                                           where))


def call_text(name, *arguments, where=None):
    """Calls a function whose last argument is a char** out; returns the text."""
    out = ctypes.c_void_p()
    check(getattr(lib, name)(*arguments, ctypes.byref(out)), where)
    try:
        return ctypes.string_at(out.value).decode("utf-8")
    finally:
        lib.tunelock_free(out.value)


def call_json(name, *arguments, where=None):
    return json.loads(call_text(name, *arguments, where=where))
