#!/usr/bin/env python3
"""kmsg-since.py — raw /dev/kmsg records, as a follower reads them (one read(2) = one record).

  kmsg-since.py --next      print the sequence number the next record will get
  kmsg-since.py --from SEQ  write every record still in the ring with sequence >= SEQ to stdout,
                            byte for byte ("PRI,SEQ,USEC,FLAGS;MESSAGE\\n" + " KEY=VALUE\\n" lines)

Runs in the e2e guest (capture step l). Records overwritten before they are read (EPIPE) are
skipped, as the kernel's interface requires; the count goes to stderr.
"""
import errno
import os
import sys


def records():
    fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    lost = 0
    try:
        while True:
            try:
                rec = os.read(fd, 8192)
            except BlockingIOError:
                break
            except OSError as e:
                if e.errno == errno.EPIPE:
                    lost += 1
                    continue
                raise
            if not rec:
                break
            yield rec
    finally:
        os.close(fd)
        if lost:
            print(f"kmsg-since: {lost} overrun(s) (EPIPE)", file=sys.stderr)


def seq(rec):
    return int(rec.split(b";", 1)[0].split(b",")[1])


def main(argv):
    if argv[1:] == ["--next"]:
        last = -1
        for rec in records():
            last = seq(rec)
        print(last + 1)
        return 0
    if len(argv) == 3 and argv[1] == "--from":
        start = int(argv[2])
        out = sys.stdout.buffer
        for rec in records():
            if seq(rec) >= start:
                out.write(rec)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
