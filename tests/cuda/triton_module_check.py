"""Triton's own launch vs tunelock's loaded-module launch of the same
compiled kernel (GPU machine, real Triton): a block-size-dependent row sum
is compiled by Triton for several BLOCK values; each cubin and its metadata
JSON go through `triton_module_check` (tunelock::cuda::LoadedKernel), and
the output bits must equal Triton's.

    python3 triton_module_check.py PATH/TO/triton_module_check WORKDIR
"""
import ctypes
import json
import os
import subprocess
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def row_sum(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, 0))


def raw_bytes(tensor):
    cpu = tensor.detach().contiguous().cpu()
    size = cpu.numel() * cpu.element_size()
    return bytes((ctypes.c_char * size).from_address(cpu.data_ptr()))


def main(checker, work):
    os.makedirs(work, exist_ok=True)
    rows, cols = 64, 10000
    torch.manual_seed(0)
    scale = torch.logspace(-3, 3, cols, device="cuda")
    x = (torch.randn(rows, cols, device="cuda") * scale).contiguous()
    with open(os.path.join(work, "x.bin"), "wb") as f:
        f.write(raw_bytes(x))
    outputs, failures = set(), 0
    for block in (128, 256, 512, 1024):
        out = torch.empty(rows, device="cuda")
        kernel = row_sum[(rows,)](x, out, cols, BLOCK=block)
        torch.cuda.synchronize()
        cubin = os.path.join(work, f"row_sum_{block}.cubin")
        meta = os.path.join(work, f"row_sum_{block}.json")
        with open(cubin, "wb") as f:
            f.write(kernel.asm["cubin"])
        with open(meta, "w") as f:
            json.dump(kernel.metadata._asdict(), f, default=str)
        ours = os.path.join(work, f"ours_{block}.bin")
        run = subprocess.run([checker, cubin, meta, os.path.join(work, "x.bin"), ours,
                              str(rows), str(cols)], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"BLOCK={block}: tunelock launch failed: {run.stderr.strip()}")
            failures += 1
            continue
        theirs = raw_bytes(out)
        with open(ours, "rb") as f:
            same = f.read() == theirs
        outputs.add(theirs)
        failures += not same
        print(f"BLOCK={block}: {run.stdout.strip()}; bits {'identical to' if same else 'DIFFER from'}"
              f" Triton's launch")
    print(f"{len(outputs)} distinct outputs over 4 BLOCK values; "
          f"{'all' if failures == 0 else 'NOT all'} bit-identical to Triton (triton {triton.__version__})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
