"""Fresh processes for the GPU checks: each runs one function of a check
module in a new interpreter (so nothing is cached between them, as between
a job's ranks or runs) and hands back the JSON it printed last."""
import json
import os
import subprocess
import sys


def fresh_process(module, function, *args, env=None):
    code = (f"import sys; sys.path[:0] = {sys.path!r}; import {module} as c; "
            f"c.{function}(*{args!r})")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.abspath(__file__)),
                         env={**os.environ, **(env or {})})
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr
