"""On a GPU, with real Triton: two record processes of the equivalence
checks' step (matmul, softmax, row sum), merged; the table must say which
GPU, driver, CUDA, Triton and PyTorch recorded it, and when.

usage: triton_provenance_check.py [WORK_DIR]   (the tunelock package on
PYTHONPATH; exit 0 when every field is filled and matches this machine)
"""
import json
import os
import sys

import torch
import triton

from triton_equivalent_checks import spawn


def main(work):
    import tunelock
    from tunelock.triton import _driver_version
    os.makedirs(work, exist_ok=True)
    for rank in range(2):
        spawn({"mode": "record", "record_path": os.path.join(work, "rec", "run")},
              env={"RANK": str(rank), "WORLD_SIZE": "2"})
    records = [os.path.join(work, "rec", f"run.rank{r}.json") for r in range(2)]
    merged = tunelock.merge(records, os.path.join(work, "table.json"))
    table = json.load(open(os.path.join(work, "table.json")))
    shown = {"arch": merged["arch"], "triton": table["triton"], "packages": table["packages"],
             **table["provenance"]}
    print(json.dumps(shown, indent=1))
    expected = {"triton": triton.__version__, "device_name": torch.cuda.get_device_name(),
                "driver_version": _driver_version(), "cuda_version": torch.version.cuda}
    ok = all(table["provenance"].get(k, table.get(k)) == v for k, v in expected.items())
    ok &= table["packages"] == {"torch": torch.__version__, "triton": triton.__version__}
    ok &= bool(table["provenance"]["recorded_at"]) and table["provenance"]["sm_count"] > 0
    print("summary: " + ("ok" if ok else f"FAILED (expected {expected})"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tunelock-provenance"))
