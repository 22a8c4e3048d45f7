#!/usr/bin/env python3
"""Runs the shell blocks of Markdown documents as a reader pastes them, so
the README and docs/ cannot rot.

The conventions the documents follow (docs/README.md says them too):
- a ```sh block holds commands that run offline, from the clone's root, with
  the built `tunelock` and `tunelock-demo` on the PATH; what they write goes
  under try/ (gitignored);
- a block whose first line is `# needs: WHAT` (a GPU, torch, a cluster, a
  fresh machine) is shown, not run, and the report says what it needs;
- a command exits 0 unless its line says `# exits N` (or `# exits non-zero`);
- output is shown in ```text blocks, which are not run.

Each document runs in its own scratch folder (examples/ linked in, and the
build as build/demo, nothing else of the clone), its blocks in order in one shell, so a block may use
what an earlier one wrote or exported. Exit 0 when every command exited as
its document says, 1 otherwise, naming document, line, command and output.
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\S*)\s*$")
NEEDS = re.compile(r"^#\s*needs:\s*(.+)$")
EXPECT = re.compile(r"#.*\bexits?\s+(non-zero|\d+)\b")
# Shell constructs that span lines: documents keep to one command per line.
UNSUPPORTED = re.compile(r"<<|^\s*(for|while|if|case)\b")


class DocError(Exception):
    pass


def shell_blocks(path):
    """(line number, [lines], needs) for each ```sh block of the file."""
    blocks, current, start, lang = [], None, 0, None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fence = FENCE.match(line.rstrip("\n"))
            if fence and current is None:
                lang, current, start = fence.group(1), [], number + 1
            elif line.startswith("```") and current is not None:
                if lang == "sh":
                    blocks.append((start, current))
                current = None
            elif current is not None:
                current.append(line.rstrip("\n"))
    if current is not None:
        raise DocError(f"{path}:{start - 1}: a ``` block is never closed")
    out = []
    for start, lines in blocks:
        needs = NEEDS.match(lines[0].strip()) if lines else None
        out.append((start, lines, needs.group(1).strip() if needs else None))
    return out


def strip_comment(text):
    """The command without a trailing comment (a '#' that starts a word)."""
    quote = None
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].rstrip()
    return text.rstrip()


def commands(path, start, lines):
    """(line number, command, expected exit) for each logical command."""
    out, pending, first = [], "", None
    for offset, raw in enumerate(lines):
        number = start + offset
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if first is None:
            first = number
        expect = EXPECT.search(raw)
        body = strip_comment(raw)
        if body.endswith("\\"):
            pending += body[:-1] + " "
            continue
        command = (pending + body).strip()
        if UNSUPPORTED.search(command):
            raise DocError(f"{path}:{first}: '{command}': the docs test runs one command per "
                           "line (no loops, conditionals or here-documents)")
        wanted = None
        if expect:
            wanted = "non-zero" if expect.group(1) == "non-zero" else int(expect.group(1))
        out.append((first, command, 0 if wanted is None else wanted))
        pending, first = "", None
    if pending:
        raise DocError(f"{path}:{first}: the block ends inside a continued command")
    return out


def script_for(path, blocks):
    """One bash script: each command in the current shell, output to a file,
    its exit code checked against the document's."""
    lines = ["set +e", 'failed=0', 'out="$DOCS_SCRATCH/.command-output"']
    for start, block, needs in blocks:
        if needs:
            lines.append(f"echo {shlex.quote(f'skip {path}:{start}: needs {needs}')}")
            continue
        for number, command, expected in commands(path, start, block):
            where = shlex.quote(f"{path}:{number}: {command}")
            lines.append(f"{{ {command}\n}} >\"$out\" 2>&1 </dev/null; rc=$?")
            if expected == "non-zero":
                check = "[ $rc -ne 0 ]"
                said = "non-zero"
            else:
                check = f"[ $rc -eq {expected} ]"
                said = str(expected)
            lines.append(
                f"if {check}; then echo {shlex.quote(f'ok   {path}:{number}')} \"(exit $rc)\"; "
                f"else failed=1; echo FAIL {where}; echo \"  exited $rc, the document says {said}\"; "
                "tail -n 15 \"$out\" | sed 's/^/  | /'; fi")
    lines.append('exit "$failed"')
    return "\n".join(lines) + "\n"


def run_document(path, source, bin_dirs, timeout, links=()):
    blocks = shell_blocks(path)
    with tempfile.TemporaryDirectory(prefix="tunelock-docs-") as scratch:
        os.symlink(os.path.join(source, "examples"), os.path.join(scratch, "examples"))
        for name, target in links:  # e.g. build/demo: the build a reader's commands name
            os.makedirs(os.path.dirname(os.path.join(scratch, name)) or scratch, exist_ok=True)
            os.symlink(target, os.path.join(scratch, name))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("TUNELOCK_", "MCORE_AUTOTUNE_", "TRITON_AUTOTUNE_"))
               and k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
        env["PATH"] = os.pathsep.join(bin_dirs + [env.get("PATH", "")])
        env["DOCS_SCRATCH"] = scratch
        # Never the reader's own cache of timed picks.
        env["TUNELOCK_EQUIVALENT_CACHE"] = "off"
        env["HOME"] = scratch
        script = script_for(os.path.relpath(path, source), blocks)
        try:
            done = subprocess.run(["bash", "-c", script], cwd=scratch, env=env,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            print((e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""))
            print(f"FAIL {path}: still running after {timeout} s")
            return 1
        sys.stdout.write(done.stdout)
        sys.stdout.write(done.stderr)
        return done.returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True, help="the clone's root")
    parser.add_argument("--bin", action="append", default=[], help="a folder to put on PATH")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per document")
    parser.add_argument("--link", action="append", default=[],
                        help="NAME=PATH: PATH linked in the scratch folder as NAME")
    parser.add_argument("documents", nargs="+")
    args = parser.parse_args()
    links = []
    for link in args.link:
        name, _, target = link.partition("=")
        if not name or not target:
            parser.error(f"--link {link!r}: expected NAME=PATH")
        links.append((name, os.path.realpath(target)))
    source = os.path.realpath(args.source)
    bins = [os.path.realpath(b) for b in args.bin]
    status = 0
    for document in args.documents:
        path = os.path.realpath(os.path.join(source, document))
        try:
            status |= run_document(path, source, bins, args.timeout, links)
        except (DocError, OSError) as e:
            print(f"FAIL {e}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
