"""`python -m tunelock` and the `tunelock` console script: the `tunelock` CLI.

    python -m tunelock --version
    python -m tunelock table show examples/tables/sm90.json
    python -m tunelock choose --kernel matmul --key '*' \
        --candidates examples/candidates.json --table examples/tables/sm90.json

The commands are the CLI's own (same engine, same output, messages and exit
codes): the package carries the program in tunelock/bin/tunelock (`pip
install .`, `cmake --install` and the build tree put it there) and this
module runs it with the arguments as given (exec: the program's exit
code, signals and output are the command's own), `launch` included.

Where the package has no program beside it, TUNELOCK_CLI names one (it
also overrides the bundled one); then a build tree's cli/tunelock next to
the package's folder, then `tunelock` on PATH.
"""
import os
import shutil
import signal
import sys
from typing import List, Optional


_HERE = os.path.dirname(os.path.abspath(__file__))


def _executable(path: Optional[str]) -> bool:
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def _is_this_script(path: str) -> bool:
    """Whether `path` is the console script now running (pip's `tunelock`
    wrapper, found on PATH): running it would run itself."""
    return bool(sys.argv and sys.argv[0]) and \
        os.path.realpath(path) == os.path.realpath(sys.argv[0])


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
        if _executable(path) and not _is_this_script(path):
            return os.path.abspath(path)
    return None


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
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


def console() -> None:
    """The `tunelock` console script that `pip install` puts on PATH."""
    sys.exit(main())


if __name__ == "__main__":
    sys.exit(main())
