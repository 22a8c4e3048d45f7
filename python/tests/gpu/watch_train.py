"""A small training loop, as any PyTorch user writes one (not run by ctest):
a convolution (cuDNN; `torch.backends.cudnn.benchmark` from BENCH=1), a
matmul (cuBLAS), and a Triton autotuned kernel. Each step is an NVTX range
named "step", so `tunelock watch --step-nvtx step` splits the log per step.

It knows nothing of the watch. With TUNELOCK_MODE set it lets tunelock pin
the Triton kernel's config (tunelock.triton.install()); with WORLD_SIZE > 1
it joins a gloo group and calls tunelock.verify() after each step (so
TUNELOCK_WATCH_VERIFY=1 compares the launches). Prints the median step time.
With WATCH_AFTER=N it starts the watch itself at step N (tunelock.watch.start)
and prints the median step before and after, from one process: the watch's
cost per step without the noise between processes."""
import os
import statistics
import time

import torch
import triton
import triton.language as tl

if os.environ.get("TUNELOCK_MODE"):
    import tunelock
    import tunelock.triton
    tunelock.triton.install()


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w)
                          for b in (256, 512, 1024, 2048) for w in (2, 4, 8)],
                 key=["n"])
@triton.jit
def scale_add(x, y, out, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out + offsets, tl.load(x + offsets, mask=mask) * 0.5 + tl.load(y + offsets, mask=mask),
             mask=mask)


def main():
    torch.backends.cudnn.benchmark = os.environ.get("BENCH") == "1"
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        torch.distributed.init_process_group("gloo")
    torch.manual_seed(0)
    device = torch.device("cuda")
    conv = torch.nn.Conv2d(64, 64, 3, padding=1).to(device)
    # A few layers with a backward pass and an optimizer step: a training
    # step of a few hundred kernels, what the watch's cost is measured on.
    layers = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(1024, 1024),
                                                       torch.nn.GELU(), torch.nn.LayerNorm(1024))
                                   for _ in range(int(os.environ.get("LAYERS", "8")))]).to(device)
    optimizer = torch.optim.AdamW(list(conv.parameters()) + list(layers.parameters()),
                                  foreach=False)
    images = torch.randn(int(os.environ.get("BATCH", "32")), 64, 56, 56, device=device)
    # A CUDA graph replayed each step (GRAPH=1): its kernels are listed once,
    # at instantiation, and each replay is one launch of the graph.
    graph, static_in = None, torch.randn(256, 1024, device=device)
    if os.environ.get("GRAPH") == "1":
        graph_weight = torch.randn(1024, 1024, device=device)
        static_out = torch.empty_like(static_in)
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            static_out.copy_(torch.relu(static_in @ graph_weight))
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out.copy_(torch.relu(static_in @ graph_weight))
    steps = int(os.environ.get("STEPS", "20"))
    times = []
    verdicts = []
    watch_after = int(os.environ.get("WATCH_AFTER", "-1"))
    for step in range(steps):
        if step == watch_after:
            import tunelock.watch
            print("watching:", tunelock.watch.start(), flush=True)
        torch.cuda.nvtx.range_push("step")
        start = time.perf_counter()
        features = torch.relu(conv(images))
        hidden = layers(features.flatten(1)[:, :1024])
        out = torch.empty_like(hidden)
        n = hidden.numel()
        with torch.no_grad():
            scale_add[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](hidden, hidden, out, n)
        loss = hidden.square().mean() + out.mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if graph is not None:
            graph.replay()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        torch.cuda.nvtx.range_pop()
        if world > 1 and os.environ.get("TUNELOCK_MODE"):
            verdicts.append(tunelock.verify())
    if watch_after > 0:
        before = statistics.median(times[5:watch_after])
        after = statistics.median(times[watch_after + 5:])
        print(f"unwatched {before * 1e3:.3f} ms, watched {after * 1e3:.3f} ms: "
              f"{(after / before - 1) * 100:+.1f} %")
        return
    print(f"median step {statistics.median(times[3:]) * 1e3:.3f} ms over {steps - 3} steps")
    if verdicts:
        print("verdicts", "".join("1" if v else "0" for v in verdicts))


if __name__ == "__main__":
    main()
