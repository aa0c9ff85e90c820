#!/usr/bin/env python3
"""web-get.py — GET a path of zwatch's status page listener in the e2e guest.

  web-get.py PATH            print the body (status other than 200: exit 1, body on stderr)
  web-get.py --time N PATH   fetch N times; print the median and the largest time in ms
"""
import statistics
import sys
import time
import urllib.error
import urllib.request

BASE = "http://127.0.0.1:8931"


def get(path):
    try:
        with urllib.request.urlopen(BASE + path, timeout=15) as r:
            return r.read()
    except urllib.error.HTTPError as e:
        sys.stderr.write(f"GET {path}: HTTP {e.code}: {e.read().decode(errors='replace')[:500]}\n")
        sys.exit(1)
    except OSError as e:
        sys.stderr.write(f"GET {path}: {e}\n")
        sys.exit(1)


def main(argv):
    if len(argv) == 4 and argv[1] == "--time":
        n, path, took = int(argv[2]), argv[3], []
        for _ in range(n):
            t = time.monotonic()
            get(path)
            took.append((time.monotonic() - t) * 1000)
        print(f"{statistics.median(took):.1f} {max(took):.1f}")
        return
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.stdout.write(get(argv[1]).decode())


main(sys.argv)
