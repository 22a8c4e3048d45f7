"""`python -m tunelock`: the `tunelock` CLI's offline commands.

    python -m tunelock --version
    python -m tunelock table show examples/tables/sm90.json
    python -m tunelock choose --kernel matmul --key '*' \
        --candidates examples/candidates.json --table examples/tables/sm90.json

The commands are the CLI's own (same engine, same output, messages and exit
codes): the package carries the program in tunelock/bin/tunelock (`pip
install .`, `cmake --install` and the build tree put it there) and this
module runs it with the arguments as given. Every command runs except
`launch`, which starts processes; run the `tunelock` program for it.

Where the package has no program beside it, TUNELOCK_CLI names one (it
also overrides the bundled one); then a build tree's cli/tunelock next to
the package's folder, then `tunelock` on PATH.
"""
import os
import shutil
import signal
import sys
from typing import List, Optional, Sequence

OFFLINE_COMMANDS = ("choose", "policy", "table", "merge", "report", "verify", "digest",
                    "preview", "timings", "log", "watch")
REFUSED_COMMANDS = ("launch",)

_HERE = os.path.dirname(os.path.abspath(__file__))


def _executable(path: Optional[str]) -> bool:
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def find_cli() -> Optional[str]:
    """The `tunelock` program this package runs, or None. TUNELOCK_CLI, when
    set, is the only one looked at."""
    named = os.environ.get("TUNELOCK_CLI")
    if named:
        return os.path.abspath(named) if _executable(named) else None
    for path in (os.path.join(_HERE, "bin", "tunelock"),  # the wheel, cmake --install, build tree
                 # <build>/python/tunelock -> <build>/cli/tunelock
                 os.path.join(os.path.dirname(os.path.dirname(_HERE)), "cli", "tunelock"),
                 shutil.which("tunelock")):
        if _executable(path):
            return os.path.abspath(path)
    return None


def _command(args: Sequence[str]) -> Optional[str]:
    """The command word: the first argument that is not a flag."""
    for arg in args:
        if arg == "--":
            return None
        if not arg.startswith("-"):
            return arg
    return None


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    command = _command(args)
    if command in REFUSED_COMMANDS:
        print(f"tunelock: `{command}` starts processes and is not run through `python -m "
              f"tunelock`; run the tunelock program: {find_cli() or 'tunelock'} {command} ... "
              f"(python -m tunelock runs {', '.join(OFFLINE_COMMANDS)})", file=sys.stderr)
        return 2
    cli = find_cli()
    if cli is None:
        named = os.environ.get("TUNELOCK_CLI")
        where = (f"TUNELOCK_CLI={named} is not an executable file" if named else
                 f"no tunelock program in {os.path.join(_HERE, 'bin')}, beside a build tree, or on PATH")
        print(f"tunelock: cannot run the CLI: {where} (install the package with "
              "`pip install .`, build the `tunelock` target, or set TUNELOCK_CLI to the program)",
              file=sys.stderr)
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    # Python ignores SIGPIPE and SIGXFSZ, and ignored signals stay ignored
    # across exec: give the program the defaults, so `| head` ends it quietly.
    for name in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    if os.name == "posix":
        os.execv(cli, [cli] + args)  # does not return
    import subprocess  # elsewhere: run it and pass its exit code on
    return subprocess.call([cli] + args)


if __name__ == "__main__":
    sys.exit(main())
