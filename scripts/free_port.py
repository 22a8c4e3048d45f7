#!/usr/bin/env python3
"""Prints the first port of those given (0: any) free on 127.0.0.1, so
`make web` serves on 8000 or, when that is taken, on a free one."""
import socket
import sys

for port in [int(p) for p in sys.argv[1:]] + [0]:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
        print(s.getsockname()[1])
        break
