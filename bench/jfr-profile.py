#!/usr/bin/env python3
"""Where a JVM's CPU and allocation go, from a Flight Recorder file (JDK 17's `jfr` has no `view`).

Usage: bench/jfr-profile.py RECORDING.jfr [--window FROM:TO] [--top N]

  --window FROM:TO  seconds from the recording's first event; only events in that window count
                    (the default is all of it; the histogram printed first shows where the load was)
  --top N           rows of the per-frame tables (default 25)

Prints, for the window: execution samples per 5 s; their share by thread and by what the innermost
frame outside the JDK belongs to (Netty, WebFlux, Reactor, Jackson, gRPC, metrics, logging, the
gateway's packages, ...), and inclusively (the share of samples with any frame of that kind on the
stack); the hottest innermost frames; the CPU of each thread, from jdk.ThreadCPULoad (which covers
the collector's and the JIT compilers' threads, which are never execution-sampled); and the sampled
allocation (jdk.ObjectAllocationSample weights) by class, by allocating frame and by kind.
"""
import argparse
import collections
import json
import re
import subprocess
import sys
from datetime import datetime

KINDS = [
    ("io.servegate.gateway.", lambda n: "gateway " + n.split(".")[3]),
    ("io.servegate.core.", lambda n: "core " + n.split(".")[3]),
    ("io.servegate.oip.", lambda n: "gRPC client, protobuf"),
    ("io.servegate.", lambda n: "servegate " + n.split(".")[2]),
    ("reactor.netty.", lambda n: "Netty, Reactor Netty"),
    ("io.netty.", lambda n: "Netty, Reactor Netty"),
    ("reactor.core.", lambda n: "Reactor operators"),
    ("reactor.util.", lambda n: "Reactor operators"),
    ("org.springframework.web.reactive.function.", lambda n: "WebFlux router, ServerRequest/Response"),
    ("org.springframework.web.", lambda n: "WebFlux, spring-web"),
    ("org.springframework.http.", lambda n: "WebFlux, spring-web"),
    ("org.springframework.core.", lambda n: "spring-core"),
    ("org.springframework.util.", lambda n: "spring-core"),
    ("org.springframework.", lambda n: "Spring, other"),
    ("io.micrometer.observation.", lambda n: "Micrometer observation"),
    ("io.micrometer.", lambda n: "Micrometer meters"),
    ("io.prometheus.", lambda n: "Micrometer meters"),
    ("tools.jackson.", lambda n: "Jackson"),
    ("com.fasterxml.jackson.", lambda n: "Jackson"),
    ("io.grpc.", lambda n: "gRPC client, protobuf"),
    ("com.google.protobuf.", lambda n: "gRPC client, protobuf"),
    ("com.google.common.", lambda n: "Guava"),
    ("com.github.benmanes.caffeine.", lambda n: "Caffeine"),
    ("io.github.resilience4j.", lambda n: "Resilience4j"),
    ("io.opentelemetry.", lambda n: "OpenTelemetry"),
    ("org.slf4j.", lambda n: "logging"),
    ("ch.qos.logback.", lambda n: "logging"),
    ("org.apache.logging.", lambda n: "logging"),
    ("java.util.logging.", lambda n: "logging"),
]
JDK = ("java.", "javax.", "jdk.", "sun.", "com.sun.")


def kind(class_name):
    for prefix, name in KINDS:
        if class_name.startswith(prefix):
            return name(class_name)
    if class_name.startswith(JDK):
        return None
    return "other: " + ".".join(class_name.split(".")[:2])


def frame_name(frame):
    method = frame.get("method") or {}
    cls = ((method.get("type") or {}).get("name") or "?").replace("/", ".")
    return cls, cls + "." + (method.get("name") or "?")


def when(event):
    """Seconds since the epoch of an event's start (JFR writes ISO 8601 with up to nanoseconds)."""
    t = event["values"]["startTime"]
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)?$", t)
    base = datetime.fromisoformat(m.group(1) + (m.group(3) or "Z").replace("Z", "+00:00"))
    return base.timestamp() + (float("0." + m.group(2)) if m.group(2) else 0.0)


def thread_name(value):
    name = (value or {}).get("javaName") or (value or {}).get("osName") or "?"
    return re.sub(r"\d+", "N", name)


def frames(event, field="stackTrace"):
    st = event["values"].get(field) or {}
    return st.get("frames") or []


def pct(n, total):
    return 100.0 * n / total if total else 0.0


def table(title, counter, total, top, unit="samples"):
    print(f"\n## {title}  ({total:,.{0 if total >= 100 or total == int(total) else 3}f} {unit})")
    for name, n in counter.most_common(top):
        print(f"{pct(n, total):6.1f} %  {name}")


def load(path, events):
    out = subprocess.run(["jfr", "print", "--json", "--events", events, path], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)["recording"]["events"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("recording")
    ap.add_argument("--window", default=None)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()

    samples = load(args.recording, "jdk.ExecutionSample")
    allocs = load(args.recording, "jdk.ObjectAllocationSample")
    cpu = load(args.recording, "jdk.ThreadCPULoad")
    process = load(args.recording, "jdk.CPULoad")
    everything = samples + allocs + cpu
    if not everything:
        sys.exit("no events")
    origin = min(when(e) for e in everything)
    lo, hi = (0.0, float("inf"))
    if args.window:
        a, b = args.window.split(":")
        lo, hi = float(a or 0), float(b or "inf")

    def inside(e):
        return lo <= when(e) - origin < hi

    per5 = collections.Counter(int((when(e) - origin) // 5) * 5 for e in samples)
    load5 = collections.defaultdict(list)
    for e in process:
        v = e["values"]
        load5[int((when(e) - origin) // 5) * 5].append((v.get("jvmUser") or 0) + (v.get("jvmSystem") or 0))
    print("# per 5 s from the recording's start: execution samples, and the JVM's CPU (jdk.CPULoad, share of "
          "the machine's cores, mean)")
    for k in sorted(set(per5) | set(load5)):
        loads = load5.get(k) or [0]
        print(f"{k:5d} s  {per5[k]:6d} samples  {100 * sum(loads) / len(loads):5.1f} %")

    samples = [e for e in samples if inside(e)]
    allocs = [e for e in allocs if inside(e)]
    cpu = [e for e in cpu if inside(e)]
    print(f"\nwindow {lo:g}..{hi:g} s: {len(samples)} execution samples, {len(allocs)} allocation samples")

    by_thread, by_kind, inclusive, hot, hot_gw = (collections.Counter() for _ in range(5))
    for e in samples:
        fs = frames(e)
        by_thread[thread_name(e["values"].get("sampledThread"))] += 1
        names = [frame_name(f) for f in fs]
        innermost = next((k for k in (kind(c) for c, _ in names) if k), "JDK only")
        by_kind[innermost] += 1
        for k in {kind(c) for c, _ in names} - {None}:
            inclusive[k] += 1
        if names:
            hot[names[0][1]] += 1
        own = next((m for c, m in names if not c.startswith(JDK)), None)
        if own:
            hot_gw[own] += 1
    n = len(samples)
    table("by thread", by_thread, n, args.top)
    table("by the innermost frame outside the JDK", by_kind, n, 40)
    table("inclusive: samples with a frame of that kind anywhere on the stack", inclusive, n, 40)
    table("hottest innermost frames", hot, n, args.top)
    table("hottest innermost frames outside the JDK", hot_gw, n, args.top)

    thread_cpu = collections.Counter()
    for e in cpu:
        v = e["values"]
        thread_cpu[thread_name(v.get("eventThread"))] += (v.get("user") or 0) + (v.get("system") or 0)
    table("CPU by thread (jdk.ThreadCPULoad, summed over its readings)", thread_cpu, sum(thread_cpu.values()),
          args.top, unit="load-units")

    by_class, by_frame, by_akind = (collections.Counter() for _ in range(3))
    for e in allocs:
        v = e["values"]
        w = v.get("weight") or 0
        by_class[((v.get("objectClass") or {}).get("name") or "?").replace("/", ".")] += w
        names = [frame_name(f) for f in frames(e)]
        own = next((m for c, m in names if not c.startswith(JDK)), "JDK only")
        by_frame[own] += w
        by_akind[next((k for k in (kind(c) for c, _ in names) if k), "JDK only")] += w
    total = sum(by_class.values())
    table("allocation by class (sampled weight)", by_class, total, args.top, unit="bytes")
    table("allocation by the innermost allocating frame outside the JDK", by_frame, total, args.top, unit="bytes")
    table("allocation by kind of that frame", by_akind, total, 40, unit="bytes")


if __name__ == "__main__":
    main()
