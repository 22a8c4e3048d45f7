"""One rank of the batch-invariance verify test: pinned on the table folder
in argv[1] at M = argv[2] rows, writing its choice log under argv[3] (the
environment names the rank)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "standin"))
sys.path.insert(0, HERE)

import tunelock  # noqa: E402
import tunelock.triton as tt  # noqa: E402
import test_batch_invariance as rows_test  # noqa: E402

tt.arch_tag = lambda: "sm90"
tt.install(mode="pinned", table_path=[sys.argv[1]], on_miss="error", batch_invariant=True)
tuner, _ = rows_test.make_kernel()
tt.batch_rows(tuner, "M", {"x": 0, "out": 0})
rows_test.call(tuner, int(sys.argv[2]))
tunelock.flush(sys.argv[3])
