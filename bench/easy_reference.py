#!/usr/bin/env python3
"""A textbook EASY backfilling simulator for SWF logs: the yardstick `lockstep sim` is timed
against and checked by (docs/benchmarks.md, "lockstep sim against a Python EASY").

Processor counts only: the machine is MaxProcs processors (else MaxNodes), a job asks for its
requested processors (else allocated) and runs for its recorded run time, killed at its
requested time (its limit; a job without one gets its run time). The queue is FCFS by submit
time, then job id. At every moment something happens (completions first, then submissions)
it starts jobs from the head while they fit; then the head gets a reservation at the earliest
time enough processors are free given that running jobs end at their limits (the shadow time,
with the extra processors left over then), and one scan of the rest of the queue starts every
job that fits now and either ends by the shadow time or uses only extra processors.

Plain and efficient: a heap of completions, a list of running jobs kept sorted by limit end,
no per-event work beyond the queue scan.

  bench/easy_reference.py LOG.swf[.gz] [--json]
"""
import bisect
import gzip
import heapq
import json
import sys
import time


def read_swf(path):
    opener = gzip.open if path.endswith(".gz") else open
    max_procs = max_nodes = -1
    jobs = []
    skipped = 0
    with opener(path, "rt") as f:
        for line in f:
            if line.startswith(";"):
                body = line[1:].strip()
                for key in ("MaxProcs:", "MaxNodes:"):
                    if body.startswith(key):
                        digits = body[len(key):].split()
                        if digits and digits[0].lstrip("-").isdigit():
                            if key == "MaxProcs:":
                                max_procs = int(digits[0])
                            else:
                                max_nodes = int(digits[0])
                continue
            v = line.split()
            if len(v) != 18:
                continue
            run = int(v[3])
            procs = int(v[7]) if int(v[7]) > 0 else int(v[4])
            if procs <= 0 or run < 0:
                skipped += 1
                continue
            req_time = int(v[8])
            limit = req_time if req_time > 0 else max(1, run)
            jobs.append((int(v[1]), int(v[0]), procs, min(run, limit), limit))
    jobs.sort()  # by submit time, then id
    capacity = max_procs if max_procs > 0 else max_nodes
    return capacity, jobs, skipped


def simulate(capacity, jobs):
    """Returns per job (submit, start, run) and the number of jobs too big to ever run."""
    free = capacity
    completions = []  # (end, id, procs)
    running = []  # sorted (limit end, id, procs)
    queue = []  # FCFS: indexes into jobs
    head_at = 0  # queue[head_at:] is the live queue
    results = []
    never = 0
    nxt = 0
    n = len(jobs)

    def start(i, now):
        nonlocal free
        submit, jid, procs, runs, limit = jobs[i]
        free -= procs
        heapq.heappush(completions, (now + runs, jid, procs))
        bisect.insort(running, (now + limit, jid, procs))
        results.append((submit, now, runs))

    while nxt < n or completions:
        now = jobs[nxt][0] if nxt < n else completions[0][0]
        if completions and completions[0][0] < now:
            now = completions[0][0]
        while completions and completions[0][0] == now:
            end, jid, procs = heapq.heappop(completions)
            free += procs
            # The running entry with this id: ends by its limit, so look it up by id.
            for k, r in enumerate(running):
                if r[1] == jid:
                    del running[k]
                    break
        while nxt < n and jobs[nxt][0] == now:
            if jobs[nxt][2] > capacity:
                never += 1
            else:
                queue.append(nxt)
            nxt += 1
        # Start from the head while it fits.
        while head_at < len(queue) and jobs[queue[head_at]][2] <= free:
            start(queue[head_at], now)
            head_at += 1
        if head_at > 4096 and head_at * 2 > len(queue):
            del queue[:head_at]
            head_at = 0
        if head_at == len(queue) or free == 0:
            continue
        # The head's reservation: when enough processors are free, and what is left then.
        need = jobs[queue[head_at]][2]
        avail = free
        shadow = None
        for end, _, procs in running:
            avail += procs
            if avail >= need:
                shadow = end
                break
        extra = avail - need
        # One backfill scan of the rest of the queue.
        k = head_at + 1
        while k < len(queue) and free > 0:
            i = queue[k]
            procs = jobs[i][2]
            if procs <= free:
                ends = now + jobs[i][4]
                if ends <= shadow:
                    start(i, now)
                    del queue[k]
                    continue
                if procs <= extra:
                    extra -= procs
                    start(i, now)
                    del queue[k]
                    continue
            k += 1
    return results, never


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.exit("usage: easy_reference.py LOG.swf[.gz] [--json]")
    t0 = time.perf_counter()
    capacity, jobs, skipped = read_swf(args[0])
    results, never = simulate(capacity, jobs)
    seconds = time.perf_counter() - t0
    waits = [start - submit for submit, start, run in results]
    bsld = [max(1.0, (w + run) / max(run, 10)) for w, (_, _, run) in zip(waits, results)]
    out = {
        "capacity": capacity,
        "jobs": len(results),
        "never_started": never,
        "skipped": skipped,
        "mean_wait_s": sum(waits) / len(waits) if waits else 0.0,
        "mean_bsld": sum(bsld) / len(bsld) if bsld else 0.0,
        "seconds": seconds,
    }
    if "--json" in sys.argv:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")


if __name__ == "__main__":
    main()
