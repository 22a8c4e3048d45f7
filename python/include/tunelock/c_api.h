/* The engine behind a small, stable C ABI, for languages that load shared
 * libraries (Python's ctypes: one build serves every Python version). Only
 * plain C types cross it: UTF-8 strings (JSON where there is structure) and
 * byte buffers.
 *
 * Every function returns 0 on success and 1 on failure; the failure's
 * message (what, where, how to fix, as the engine words it) is then
 * tunelock_last_error(), valid on the calling thread until its next call.
 * Strings returned through `char**` belong to the caller: free them with
 * tunelock_free().
 *
 * Policy, choices, the choice log and verification act on the process
 * runtime: the same one C++ launchers in the process use. */
#ifndef TUNELOCK_C_API_H
#define TUNELOCK_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__)
#pragma GCC visibility push(default) /* the library hides everything else */
#endif

const char* tunelock_version(void);
const char* tunelock_last_error(void);
void tunelock_free(char* text);

/* ---- Policy ---- */

/* The policy the environment (TUNELOCK_*, MCORE_AUTOTUNE_* ...) states, or
 * `pairs_json` ({"mode": "pinned", "block_sizes": "BLOCK_M=64", ...}: the
 * key/value source, values as strings) applied over the environment's
 * policy when `over_environment` is 1, else over the defaults. Out: the
 * resolved policy as JSON. Validated: an unknown key or bad value fails. */
int tunelock_policy_resolve(const char* pairs_json, int over_environment, char** policy_json);

/* Installs that policy into the process runtime (NULL pairs: the
 * environment's). Pass `over_environment` 1 to layer the pairs over the
 * TUNELOCK_* variables (what Python's install(**fields) does); 0 replaces
 * the environment's policy with the pairs over the defaults. A policy that
 * cannot be carried out (unwritable record path or choice log) fails and
 * keeps the previous one; settings its mode ignores are named in one
 * warning. Out: the installed policy. */
int tunelock_install(const char* pairs_json, int over_environment, char** policy_json);

/* The installed policy as JSON. */
int tunelock_installed_policy(char** policy_json);

/* Whether the policy pins, logs and verifies kernel module.name (in scope
 * and not config-invariant): 1 or 0 in *observed. */
int tunelock_observes(const char* module, const char* name, int* observed);

/* ---- The driver: the one way in for a face ----
 *
 * A face (an interception of another autotuner) builds a kernel's tuning
 * key, asks the plan once per kernel, and hands each new key's first call
 * to tunelock_first_call with a tunelock_call_runner: the engine decides,
 * checks bits, times, audits, logs and records, and answers what to
 * launch. The same protocol is tunelock/first_call.hpp in C++ (CallRunner,
 * run_first_call) and tunelock.first_call in Python (tunelock.Runner). */

/* The tuning key: args_json [[name, value], ...] (integers, booleans,
 * strings) then dtypes_json ["torch.bfloat16", ...], joined as the engine
 * joins them (`M=128|N=64|torch.float16`). */
int tunelock_tuning_key(const char* args_json, const char* dtypes_json, char** key);

/* Routes the engine's log to fn(level, message, user): level is spdlog's
 * (0 trace, 1 debug, 2 info, 3 warn, 4 error, 5 critical), message the
 * text without a prefix. NULL puts the stderr sink back. */
typedef void (*tunelock_log_fn)(int level, const char* message, void* user);
int tunelock_set_log_sink(tunelock_log_fn fn, void* user);

/* signature(config) of a config in Megatron's form: the text tables,
 * records and TUNELOCK_NONDETERMINISTIC name configs by. */
int tunelock_signature(const char* config_json, char** signature);

/* The engine's plan for the first call of a kernel with `config_count`
 * configs under the installed policy, and what it means for the face:
 * {"plan": "untouched" | "single" | "single_logged" | "pinned" | "audited"
 * | "consensus" | "timed_logged" | "timed_recorded", "engine_chooses"
 * (pinned, audited, consensus: the face's own autotuner never times),
 * "intercepts" (neither untouched nor single), "counts_calls" (audited:
 * every call is counted against its entry)} (tunelock/call_plan.hpp). */
int tunelock_call_plan(const char* module, const char* name, int64_t config_count, char** plan);

/* How the caller runs one call's candidates, for tunelock_first_call: the
 * engine's driver says what to run (tunelock/first_call.hpp, CallRunner).
 * Each callback returns 0, or non-zero when the candidate failed to run,
 * with its error text written into `error` (NUL-terminated, at most
 * error_size bytes).
 * - time: the median milliseconds of candidate i, as the autotuner times;
 * - run_outputs: one run of candidate i from the call's inputs (or the second
 *   input), writing into `outputs` a text (at most outputs_size bytes,
 *   NUL-terminated) equal for two runs exactly when every output bit is
 *   (a digest of shapes, types and bytes);
 * - use_second_input: overwrites the floating-point inputs with a second input;
 *   returns 1 when it did, 0 when the call offers none;
 * - put_back: every buffer of the call as it came in;
 * - time_briefly (may be NULL: time): a shorter timing of candidate i, for
 *   choosing among configs that give the same bits (CallRunner::time_briefly).
 * runs_candidates 0: the choice is made while compiling, nothing runs now;
 * time hands back what the caller's own autotuner measured (a record, an
 * audit) and pinned plans only decide and log (CallRunner::runs_candidates).
 * Batch invariance (may be NULL/0: none): batch_dim the key argument that
 * counts the call's independent rows ("M"), batch_rows how many it has, and
 * run_first_rows candidate i on the first `rows` rows alone and inside the
 * full call, writing a text for each as run_outputs does (texts equal
 * exactly when the rows' bits are, across candidates of one call;
 * CallRunner::run_first_rows). */
typedef struct tunelock_call_runner {
  void* context;
  int has_outputs;     /* the call has outputs a bits check can compare */
  int capturing;       /* the caller's stream is being captured into a graph */
  int runs_candidates; /* candidates can run now (0: at compile time) */
  int (*time)(void* context, int64_t i, double* median_ms, char* error, size_t error_size);
  int (*run_outputs)(void* context, int64_t i, char* outputs, size_t outputs_size, char* error,
                     size_t error_size);
  int (*use_second_input)(void* context);
  int (*put_back)(void* context);
  int (*time_briefly)(void* context, int64_t i, double* median_ms, char* error, size_t error_size);
  const char* batch_dim;
  int64_t batch_rows;
  int (*run_first_rows)(void* context, int64_t i, int64_t rows, char* alone, size_t alone_size,
                        char* inside, size_t inside_size, char* error, size_t error_size);
} tunelock_call_runner;

/* The first call of a kernel for a new key, told by the engine: the plan,
 * the decision, the fastest equivalent, the bits check, the audit entry,
 * the choice log and the record, with every message. candidates_json the
 * live configs, config_count the kernel's declared ones (the plan's input),
 * own_default the candidate the kernel's own untimed heuristic launches,
 * which on_miss min_cost takes (-1: none, the cheapest), identity the
 * identity of the kernel's code ("triton:<hash>";
 * NULL or "" when unknown), recorded and compared with the table's.
 * Out: {"plan" (as tunelock_call_plan gives it), "launched" (the candidate
 * to launch from now on), "reason"
 * (pinned plans), "audit_id" (audited, else null), "timed", "provisional"}. */
int tunelock_first_call(const char* arch, const char* module, const char* name, const char* key,
                        const char* candidates_json, int64_t config_count, int64_t own_default,
                        const char* identity, const tunelock_call_runner* runner,
                        char** outcome_json);

/* The enumerate line of a kernel the caller runs untouched (UNPINNED, with
 * its count of configs), once per policy, when the policy asks for it. */
int tunelock_enumerate(const char* module, const char* name, int64_t config_count);

int tunelock_count_audited_call(int64_t id, int64_t calls);

/* Megatron's selection.autotune_configs for kernels with no autotuner to
 * intercept: under the installed policy, which of configs_json to keep —
 * the block-size match or the cheapest when pinned, all otherwise — as a
 * JSON list of indices. */
int tunelock_autotune_configs(const char* configs_json, char** kept_json);

/* The device, for timing sidecars: {"device_name", "sm_count",
 * "driver_version", "cuda_version"} (missing fields empty). */
int tunelock_set_device(const char* device_json);

/* {"entry": "value", ...} and its XXH3-128 digest. */
int tunelock_choice_log(char** entries_json);
int tunelock_choice_digest(char** digest);

/* Changes whenever choices a face cached are stale: a new policy, or a
   consensus check that switched what some keys launch. */
int tunelock_choice_generation(uint64_t* generation);

/* Writes records and, with a non-empty prefix (NULL: TUNELOCK_CHOICE_LOG),
 * the choice log, now. */
int tunelock_flush(const char* choice_log_prefix);

/* ---- Verification ---- */

/* A transport's all-gather, as a callback: send `payload` to every rank of
 * the group and hand each rank's payload, in rank order, to
 * tunelock_gather_add(sink, ...). Returns 0, or non-zero on failure. */
typedef int (*tunelock_gather_fn)(void* context, const char* payload, size_t size, void* sink);
int tunelock_gather_add(void* sink, const char* data, size_t size);

/* One check in a group (iteration < 0), or the policy's cadence
 * (maybe_verify at `iteration`). world_ranks names each group rank's world
 * rank for reports (NULL: the same). *verdict: 1 agreed, 0 conflict, -1
 * not checked. verify_strict conflicts fail with the report. */
int tunelock_verify(int64_t iteration, int rank, int size, const char* group_id,
                    const int* world_ranks, tunelock_gather_fn gather, void* context, int* verdict);

/* A transport's all-reduce, as a callback: combine `count` 64-bit integers
 * elementwise over every rank of the group, in place (op 0: sum, 1:
 * minimum). Returns 0, or non-zero on failure. */
typedef int (*tunelock_all_reduce_fn)(void* context, int64_t* values, size_t count, int op);

/* *due = 1 when the policy's cadence checks at `iteration` (verify_every
 * divides it), else 0. Every verify entry below with iteration >= 0 asks
 * this first and, when no check is due, reads no rendezvous variable and
 * builds no transport: *verdict = -1. */
int tunelock_verify_due(int64_t iteration, int* due);

/* tunelock_verify over the UCX world collective from the environment (RANK,
 * WORLD_SIZE, rendezvous variables); fails where UCX was not built. */
int tunelock_verify_ucx(int64_t iteration, int* verdict);

/* A check in a program's process group (torch.distributed), over the
 * transport TUNELOCK_VERIFY_TRANSPORT names: "ucx" (the default, "auto",
 * where this build has UCX) connects the group's ranks over UCX at the
 * group's first check, their addresses all-gathered once through `gather`
 * (no port or job token), and runs every check along UCX's binomial tree
 * without calling back; "group" (the default without UCX) runs each check
 * over `all_reduce`: bytes per rank grow with the keys new in the check,
 * not with the group's size, a check where every rank logged the same new
 * entries (or none) is one all-reduce of six integers, and `gather` carries
 * only conflicting keys' texts. Same verdicts, reports and strict mode as
 * tunelock_verify either way. *over_ucx (may be NULL): 1 when this check
 * went over UCX. */
int tunelock_verify_group(int64_t iteration, int rank, int size, const char* group_id,
                          const int* world_ranks, tunelock_gather_fn gather,
                          tunelock_all_reduce_fn all_reduce, void* context, int* verdict,
                          int* over_ucx);

/* ---- Other tools' files ---- */

/* Other tools' tuning files into one table file: paths_json a JSON array of
 * files or folders (today: fused-MoE config files,
 * E=<experts>,N=<n>,device_name=<device>...json), arch the table's
 * architecture, output the table to write (.tlb binary, else JSON).
 * *entries: the entries imported. */
int tunelock_import(const char* paths_json, const char* arch, const char* output, int64_t* entries);

/* A table's entries back into those tools' files in `folder` (created); a
 * file there that differs is refused, nothing written. *files: how many. */
int tunelock_export(const char* table, const char* folder, int64_t* files);

/* ---- Offline: tables, records, decisions ---- */

/* {"kernel", "key", "candidates": [config...] or a manifest path in
 * "candidates_file", "tables": [paths], "arch", "on_miss", "block_sizes",
 * "chaos", "rank"} -> {"index", "signature", "reason", "explanation"}. */
int tunelock_choose(const char* request_json, char** result_json);

/* {"records": [paths], "output": path, "arch"?, "source"?} -> {"arch",
 * "entries", "disagreements", "report"}. */
int tunelock_merge(const char* request_json, char** result_json);

/* {"records": [paths]} -> {"report": text, "disagreements": [...]}. */
int tunelock_report(const char* request_json, char** result_json);

/* The keys runs needed that a table does not answer by an entry, as
 * `tunelock table coverage`: request {"table": path, "logs": [choice-log
 * paths]}; result {"arch", "logs", "needed", "answered", "covered",
 * "misses": [{"kernel", "key", "gap" (fallback, stale, identity),
 * "launched", "ranks", "entry"?, "table_identity"?, "run_identity"?}]}. */
int tunelock_table_coverage(const char* request_json, char** result_json);

/* {"audits": [paths], "max_regret": percent} -> the audit report as JSON
 * ({"rows": [...], "total_regret_pct", "exit_code", ...}) plus "text". */
int tunelock_audit_report(const char* request_json, char** result_json);

/* The batch-invariance gate of a table file (.json or .tlb): out
 * {"passes", "kernels": [{"kernel", "verdict" ("proven", "no batch dim",
 * "extrapolated", "unproven"), "dim", "proven" (sizes), "variant"
 * (batch-variant configs), "unproven" (keys), "groups"}]}. */
int tunelock_table_invariance(const char* table_path, char** report_json);

/* What the file at `path` is, from its name and bytes as every face tells:
 * {"kind": "table"|"manifest"|"record"|"timings"|"choice_log", "encoding":
 * "json"|"binary"}, or {"kind": "unknown", "encoding": null, "problem"}.
 * Fails only when the file cannot be read. */
int tunelock_file_kind(const char* path, char** kind_json);

/* A table file (JSON or binary) as canonical JSON; and conversion by the
 * output's extension (.tlb binary, else JSON). */
int tunelock_table_json(const char* path, char** table_json);
int tunelock_table_convert(const char* input, const char* output);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif

#endif /* TUNELOCK_C_API_H */
