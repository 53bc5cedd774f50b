#!/usr/bin/env python3
"""measure_tree.py LABEL CMD...: runs CMD (its output dropped) and prints `LABEL: W s wall, M MB peak RSS`,
the memory summed over CMD and every process it starts (Flink's JVM is a child of PyFlink's
Python), sampled every 50 ms from /proc."""
import os
import subprocess
import sys
import time

PAGE = os.sysconf("SC_PAGE_SIZE")


def parent_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    return int(text[text.rindex(")") + 2:].split()[1])


def tree_rss(root):
    """Resident bytes of `root` and its descendants."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = parent_of(entry)
            except (OSError, ValueError):
                pass
    members, total = {root}, 0
    for pid in sorted(parents):
        if parents[pid] in members or pid == root:
            members.add(pid)
    for pid in members:
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * PAGE
        except OSError:
            pass
    return total


label, command = sys.argv[1], sys.argv[2:]
started = time.monotonic()
process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
peak = 0
while process.poll() is None:
    peak = max(peak, tree_rss(process.pid))
    time.sleep(0.05)
wall = time.monotonic() - started
status = "" if process.returncode == 0 else f" (exit {process.returncode})"
print(f"{label}: {wall:.2f} s wall, {peak / 2**20:.0f} MB peak RSS{status}")
