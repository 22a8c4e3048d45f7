"""torch.compile under the lockfile on a real model (not run by ctest):
GPT-2 from transformers, built from a config with random weights, bf16,
forward and backward, every process with fresh Inductor and Triton caches.

    inductor_model_checks.py smoke            one record and one pinned process, a small GPT-2
    inductor_model_checks.py record WORK      2 recording processes, then `tunelock merge`
    inductor_model_checks.py pinned WORK      4 pinned processes in turn: bits, logs, launches
    inductor_model_checks.py ranks WORK       2 ranks over gloo, pinned, then under chaos
    inductor_model_checks.py speed WORK       max-autotune, default, deterministic and pinned,
                                              one at a time: compile time and steady step
    inductor_model_checks.py all_checks WORK  all of these in one run
    inductor_model_checks.py second_run WORK  record, pinned and ranks

Each process prints one JSON line: its compile time (the first step, which
compiles), its median steady step, the SHA-256 of its loss, logits and
every gradient, and what was chosen (tunelock's choice log, or for the
untouched max-autotune run the decisions Inductor benchmarked)."""
import hashlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LAYERS = int(os.environ.get("LAYERS", "2"))
BATCH, SEQ = int(os.environ.get("BATCH", "8")), int(os.environ.get("SEQ", "512"))
STEPS = int(os.environ.get("STEPS", "20"))


def build_model(torch):
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    config = GPT2Config(n_layer=LAYERS, n_embd=int(os.environ.get("EMBD", "768")), n_head=int(os.environ.get("HEADS", "12")),
                        n_positions=SEQ, vocab_size=int(os.environ.get("VOCAB", "32768")),
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return GPT2LMHeadModel(config).to("cuda", torch.bfloat16)


def count_benchmarked(describe):
    """The untouched run's own decisions: every template decision among two
    or more choices and every generated kernel timed, by the same keys
    tunelock logs, plus coordinate descent's runs."""
    from torch._inductor import select_algorithm
    from torch._inductor.runtime import triton_heuristics as th
    seen = {"templates": set(), "kernels": set(), "descents": 0}
    call, autotune = select_algorithm.AlgorithmSelectorCache.__call__, \
        th.CachingAutotuner.autotune_to_one_config
    descent = th.CachingAutotuner.coordinate_descent_tuning

    def counted_call(self, name, choices, input_nodes, layout, *args, **kwargs):
        if len(choices) > 1:
            hint = lambda values: [int(v) for v in  # noqa: E731
                                   __import__("torch._inductor.virtualized", fromlist=["V"])
                                   .V.graph.sizevars.size_hints(values)]
            seen["templates"].add((name, repr(describe.template_key_args(input_nodes, layout,
                                                                         hint))))
        return call(self, name, choices, input_nodes, layout, *args, **kwargs)

    def counted_autotune(self, *args, **kwargs):
        seen["kernels"].add((describe.kernel_name(self), repr(describe.kernel_key_args(self))))
        return autotune(self, *args, **kwargs)

    def counted_descent(self, *args, **kwargs):
        seen["descents"] += 1
        return descent(self, *args, **kwargs)

    select_algorithm.AlgorithmSelectorCache.__call__ = counted_call
    th.CachingAutotuner.autotune_to_one_config = counted_autotune
    th.CachingAutotuner.coordinate_descent_tuning = counted_descent
    return seen


def step_process():
    """One process: compile, one step hashed, then steady steps timed."""
    import torch
    label, mode = os.environ["LABEL"], os.environ.get("COMPILE_MODE", "max-autotune-no-cudagraphs")
    world = int(os.environ.get("WORLD_SIZE", "1"))
    grouped = world > 1 and "MASTER_PORT" in os.environ  # recording ranks need no group
    if grouped:
        import torch.distributed as dist
        dist.init_process_group("gloo")
    tunelock = None
    if os.environ.get("TUNELOCK_MODE"):
        import tunelock
        import tunelock.inductor
        tunelock.inductor.install()
    import tunelock._inductor_describe as describe
    counted = count_benchmarked(describe) if os.environ.get("COUNT") == "1" else None
    if os.environ.get("DETERMINISTIC") == "1":
        torch._inductor.config.deterministic = True
    model = build_model(torch)
    compiled = torch.compile(model, mode=mode)
    ids = torch.randint(0, model.config.vocab_size, (BATCH, SEQ), device="cuda",
                        generator=torch.Generator("cuda").manual_seed(1))
    watched = False
    if os.environ.get("WATCH"):
        import tunelock.watch
        watched = tunelock.watch.start(os.environ["WATCH"])

    def step():
        model.zero_grad(set_to_none=True)
        out = compiled(input_ids=ids, labels=ids)
        out.loss.backward()
        return out

    torch.cuda.synchronize()
    start = time.perf_counter()
    out = step()
    torch.cuda.synchronize()
    compile_s = time.perf_counter() - start
    digest = hashlib.sha256()
    for tensor in [out.loss, out.logits] + [p.grad for _, p in sorted(model.named_parameters())
                                            if p.grad is not None]:
        digest.update(tensor.detach().contiguous().view(-1).view(torch.uint8).cpu().numpy()
                      .tobytes())
    result = {"label": label, "compile_s": round(compile_s, 2), "sha256": digest.hexdigest()}
    if grouped:
        try:
            result["verify"] = tunelock.verify()
        except tunelock.TunelockError as error:
            result["verify"] = "caught: " + " ".join(str(error).split())[:700]
    if os.environ.get("WAIT_FILE"):  # compiled beside others; timed once the GPU is free
        deadline = time.time() + 560
        while not os.path.exists(os.environ["WAIT_FILE"]) and time.time() < deadline:
            time.sleep(0.5)
    times = []
    for i in range(STEPS + 3):
        if watched:
            tunelock.watch.step()
        torch.cuda.synchronize()
        start = time.perf_counter()
        step()
        torch.cuda.synchronize()
        if i >= 3:
            times.append(time.perf_counter() - start)
    result["step_ms"] = round(statistics.median(times) * 1e3, 3)
    if tunelock is not None:
        log = tunelock.choice_log()
        result["logged"] = len(log)
        result["logged_templates"] = sum("|inductor.mm|" in k or "|inductor.addmm|" in k
                                         or "|inductor.bmm|" in k for k in log)
        result["log_digest"] = tunelock.choice_digest()
        tunelock.flush()
    if counted is not None:
        result["benchmarked_templates"] = len(counted["templates"])
        result["benchmarked_kernels"] = len(counted["kernels"])
        result["descents"] = counted["descents"]
    if watched:
        result["watched"] = tunelock.watch.flush()
    print(json.dumps(result), flush=True)


def spawn(work, label, policy=None, cache=None, **env):
    """One step process with fresh Inductor and Triton caches: a new
    directory, or `cache` emptied first."""
    if cache is None:
        cache = tempfile.mkdtemp(prefix=f"{label}-", dir=work)
    else:
        shutil.rmtree(cache, ignore_errors=True)
        os.makedirs(cache)
    variables = {k: v for k, v in os.environ.items() if not k.startswith("TUNELOCK_")}
    variables.update({"LABEL": label, "TORCHINDUCTOR_CACHE_DIR": os.path.join(cache, "inductor"),
                      "TRITON_CACHE_DIR": os.path.join(cache, "triton")})
    variables.update({f"TUNELOCK_{k.upper()}": str(v) for k, v in (policy or {}).items()})
    variables.update({k: str(v) for k, v in env.items()})
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), "step"], env=variables,
                            cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def results(procs, timeout=590):
    out = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=timeout)
        lines = [line for line in stdout.splitlines() if line.startswith("{")]
        if proc.returncode != 0 or not lines:
            print(f"process failed ({proc.returncode}):\n{stderr[-4000:]}", flush=True)
            out.append(None)
            continue
        warnings = [line for line in stderr.splitlines() if "tunelock" in line][:6]
        record = json.loads(lines[-1])
        record["tunelock_lines"] = warnings
        out.append(record)
        print(json.dumps(record), flush=True)
    return out


def tables_of(work):
    return os.environ.get("TABLES") or os.path.join(work, "tables")


def record(work):
    print("== record: 2 processes, then merge", flush=True)
    procs = [spawn(work, f"record{r}", {"mode": "record", "record": os.path.join(work, "rec")},
                   RANK=r, WORLD_SIZE=2, MASTER_ADDR="127.0.0.1", STEPS=5) for r in range(2)]
    results(procs)
    import tunelock
    import tunelock._introspection as introspection
    os.makedirs(tables_of(work), exist_ok=True)
    arch = introspection.arch_tag()
    merged = tunelock.merge([os.path.join(work, f"rec.rank{r}.json") for r in range(2)],
                            os.path.join(tables_of(work), f"{arch}.json"))
    print("merged:", json.dumps({k: v for k, v in merged.items() if k != "report"})[:800],
          flush=True)


def pinned(work):
    """Four pinned processes one after another, each with fresh caches at
    the same path: Triton writes the path of Inductor's generated source
    into every cubin's line info, so caches at different paths give
    different modules (and launch logs) for the same kernels."""
    import tunelock
    print("== pinned: 4 processes, fresh caches at one path", flush=True)
    policy = {"mode": "pinned", "table_path": tables_of(work)}
    runs = [results([spawn(work, f"pinned{i}", policy, cache=os.path.join(work, "pinned-cache"),
                           WATCH=os.path.join(work, f"launches{i}"))])[0] for i in range(4)]
    print("distinct outputs:", len({r["sha256"] for r in runs if r}),
          "distinct logs:", len({r["log_digest"] for r in runs if r}), flush=True)
    binary = os.path.join(os.path.dirname(tunelock.__file__), "bin", "tunelock")
    logs = sorted(f for f in os.listdir(work) if f.startswith("launches") and
                  f.endswith(".launches.json"))
    print("launch logs:", logs, flush=True)
    for other in logs[1:]:
        compare = subprocess.run([binary, "watch", "compare", os.path.join(work, logs[0]),
                                  os.path.join(work, other)], capture_output=True, text=True)
        print(f"watch compare {logs[0]} {other}: rc={compare.returncode}",
              (compare.stdout + compare.stderr).strip()[:600], flush=True)


def ranks(work):
    print("== 2 ranks over gloo, pinned; then chaos", flush=True)
    # Under chaos a rank may pick a config whose bits change run to run; with
    # the bits check on, strict mode stops it there, before verify names it.
    for name, extra in (("agree", {}), ("chaos", {"chaos": 1, "verify_strict": 1,
                                                  "check_bits": "off"})):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        policy = {"mode": "pinned", "table_path": tables_of(work), **extra}
        procs = [spawn(work, f"{name}{r}", policy, RANK=r, WORLD_SIZE=2, MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=port, STEPS=3) for r in range(2)]
        for r in results(procs):
            print(f"  {name}: verify -> {r and r.get('verify')}", flush=True)


def speed(work):
    print("== one at a time: max-autotune, default, deterministic, pinned", flush=True)
    for label, policy, env in (
            ("max_autotune", None, {"COUNT": "1"}),
            ("default", None, {"COMPILE_MODE": "default"}),
            ("deterministic", None, {"DETERMINISTIC": "1"}),
            ("pinned_solo", {"mode": "pinned", "table_path": tables_of(work)}, {})):
        results([spawn(work, label, policy, **env)])


def all_checks(work):
    """Everything in one go: the untouched max-autotune run compiles beside
    the two recording runs and is timed later, alone, beside the others."""
    go = os.path.join(work, "go")
    baseline = spawn(work, "max_autotune", None, COUNT="1", WAIT_FILE=go)
    record(work)
    pinned(work)
    print("== one at a time: max-autotune (compiled beside the records), default, "
          "deterministic, pinned", flush=True)
    open(go, "w").close()
    results([baseline])
    for label, policy, env in (
            ("default", None, {"COMPILE_MODE": "default"}),
            ("deterministic", None, {"DETERMINISTIC": "1"}),
            ("pinned_solo", {"mode": "pinned", "table_path": tables_of(work)}, {})):
        results([spawn(work, label, policy, **env)])
    ranks(work)


def second_run(work):
    """Record, merge, pinned and the two ranks again, without the untouched
    and speed runs."""
    record(work)
    pinned(work)
    ranks(work)


def smoke():
    work = tempfile.mkdtemp(prefix="inductor-smoke-")
    record(work)
    speed_env = {"mode": "pinned", "table_path": tables_of(work)}
    results([spawn(work, "pinned_smoke", speed_env)])
    results([spawn(work, "count_smoke", None, COUNT="1")])


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "step":
        step_process()
    elif command == "smoke":
        smoke()
    else:
        work = sys.argv[2]
        os.makedirs(work, exist_ok=True)
        globals()[command](work)
