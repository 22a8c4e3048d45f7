/* libtunelock_watch.so's C interface: every kernel launch of this process,
 * through CUPTI, written per rank as `<prefix>.rank<N>.launches.json`
 * (engine/include/tunelock/launch_log.hpp).
 *
 * The usual way in is no code at all: `tunelock watch -- CMD` sets
 * CUDA_INJECTION64_PATH to this library, and the CUDA driver loads it into
 * CMD. A program may instead start it itself (tunelock_watch_start) and
 * mark its steps; Python's `tunelock.watch` module calls these. Every call
 * is safe without a watch running: it does nothing. */
#ifndef TUNELOCK_WATCH_H
#define TUNELOCK_WATCH_H

#include <stddef.h>

#if defined(__GNUC__)
#define TUNELOCK_WATCH_API __attribute__((visibility("default")))
#else
#define TUNELOCK_WATCH_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Starts watching this process now, writing under `prefix` (NULL: the
 * TUNELOCK_WATCH_OUT variable, else "tunelock-watch"). 0 when watching,
 * 1 when launches cannot be observed (another CUPTI subscriber such as the
 * PyTorch profiler or Nsight holds CUPTI: said once on stderr; the program
 * runs on unobserved). */
TUNELOCK_WATCH_API int tunelock_watch_start(const char* prefix);

/* 1 while launches are being recorded. */
TUNELOCK_WATCH_API int tunelock_watch_active(void);

/* Closes the current step: its launches get their own digest. */
TUNELOCK_WATCH_API void tunelock_watch_step(void);

/* Writes the launch log now (it is also written at exit). 0 on success,
 * 1 with the reason on stderr. */
TUNELOCK_WATCH_API int tunelock_watch_flush(void);

/* The digest of every launch since the previous call, for the online
 * check (16 hex digits, or "none"), into `out` of `size` bytes. 0 when
 * watching, 1 when not (out is then ""). */
TUNELOCK_WATCH_API int tunelock_watch_check_digest(char* out, size_t size);

/* The CUDA driver's entry point for CUDA_INJECTION64_PATH: 1 on success. */
TUNELOCK_WATCH_API int InitializeInjection(void);

#ifdef __cplusplus
}
#endif

#endif
