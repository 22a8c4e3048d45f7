"""One process of the equivalents-cache test: a pinned run with
TUNELOCK_EQUIVALENT=timed over the table in argv[1] (the environment names
the cache), printing what it launched and how often it timed."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "standin"))
sys.path.insert(0, HERE)

import tunelock.triton as tt  # noqa: E402
import test_equivalent_cache as cache_test  # noqa: E402

tt.arch_tag = lambda: "sm90"
result, warps, calls, digest = cache_test.pinned_run_in(sys.argv[1])
print(json.dumps({"result": result, "warps": warps, "calls": calls, "digest": digest}))
