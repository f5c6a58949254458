#!/usr/bin/env python3
"""Chooses which new fuzzing inputs join the committed corpus (called by scripts/fuzz.sh).

usage: fuzz_corpus_keep.py SHARED_DIR CORPUS_DIR LIMIT_BYTES CANDIDATE_DIR < names

Reads candidate file names (in CANDIDATE_DIR) from standard input. A candidate is refused when it
holds a run of 64 or more bytes of any file in SHARED_DIR (the third-party files of ../shared must
not enter the project, not even as a mutated copy). The others are copied into CORPUS_DIR,
smallest first, while CORPUS_DIR stays within LIMIT_BYTES and the whole corpus (CORPUS_DIR's
parent, one folder per target) within 9 * LIMIT_BYTES. Prints the number copied.
"""
import os
import sys

WINDOW = 32  # every common run of >= 2*WINDOW-1 bytes contains one aligned window


def main() -> int:
    shared_dir, corpus_dir, limit, cand_dir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    windows = set()
    if os.path.isdir(shared_dir):
        for name in os.listdir(shared_dir):
            with open(os.path.join(shared_dir, name), "rb") as f:
                data = f.read()
            for i in range(0, len(data) - WINDOW + 1, WINDOW):
                windows.add(data[i:i + WINDOW])
    os.makedirs(corpus_dir, exist_ok=True)
    total = sum(os.path.getsize(os.path.join(corpus_dir, n)) for n in os.listdir(corpus_dir))
    root = os.path.dirname(os.path.normpath(corpus_dir))
    everything = sum(os.path.getsize(os.path.join(d, n)) for d, _, files in os.walk(root) for n in files)
    candidates = []
    for line in sys.stdin:
        name = line.strip()
        if not name:
            continue
        path = os.path.join(cand_dir, name)
        with open(path, "rb") as f:
            data = f.read()
        if any(data[i:i + WINDOW] in windows for i in range(0, len(data) - WINDOW + 1)):
            continue
        candidates.append((len(data), name, data))
    added = 0
    for size, name, data in sorted(candidates):
        if total + size > limit or everything + size > 9 * limit:
            break
        target = os.path.join(corpus_dir, name)
        if os.path.exists(target):
            continue
        with open(target, "wb") as f:
            f.write(data)
        total += size
        everything += size
        added += 1
    print(added)
    return 0


if __name__ == "__main__":
    sys.exit(main())
