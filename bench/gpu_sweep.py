#!/usr/bin/env python3
"""The image classifier behind the gateway: its in-process capacity, then goodput over offered rate x
scheduling policy, in one report. Run by bench/gpu.sh (which finds java and the gateway).

    python3 bench/gpu_sweep.py --gateway "java -jar gateway.jar" --out DIR [--device cuda] [--image-size 224]
        [--arch resnet50] [--rates 0.25,0.5,0.8,1,1.5,2] [--policies adaptive,symphony,clipper]
        [--slo-ms 50] [--seconds 15]

1. `serve.py --profile` times the model alone (bytes -> numpy -> device -> forward -> argmax ->
   host) per batch size: the in-process capacity is the best images/s over the sizes.
2. One classifier container (warmed at every batch size before it reports ready) and, per policy,
   one gateway (cache off) with the model added with that scheduler and an app of the SLO.
3. Per offered rate (a fraction of the capacity): open-loop Poisson arrivals of distinct 3 x H x W
   uint8 images as `application/octet-stream` bodies, from several processes with many
   connections each; latency counts from the intended send time. Goodput: answers that are
   predictions (not defaults) within the SLO, per second.
Writes gpu.json and index.html to --out and prints a table.
"""

import argparse
import datetime
import html
import http.client
import json
import math
import multiprocessing
import os
import queue
import random
import shlex
import socket
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SERVE = os.path.join(ROOT, "containers", "image-classifier", "serve.py")
MODEL, APP = "classifier", "classifier-app"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load_average():
    with open("/proc/loadavg") as f:
        return [float(v) for v in f.read().split()[:3]]


def post_json(port, path, body):
    request = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as r:
        return r.read()


def wait_http(url, process, seconds, what):
    until = time.time() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if process.poll() is not None or time.time() > until:
            raise SystemExit("%s did not become ready" % what)
        time.sleep(0.3)


def classifier_env(args):
    env = dict(os.environ, DEVICE=args.device, ARCH=args.arch, IMAGE_SIZE=str(args.image_size),
               MAX_BATCH_SIZE=str(args.max_batch_size), MODEL_NAME=MODEL,
               CUDNN_BENCHMARK="1" if args.cudnn_benchmark else "0")
    if args.warmup_batch_sizes is not None:
        env["WARMUP_BATCH_SIZES"] = args.warmup_batch_sizes
    return env


def profile(args):
    out = os.path.join(args.out, "profile.json")
    sizes = ",".join(str(b) for b in (1, 2, 4, 8, 16, 32, 64) if b <= args.max_batch_size)
    subprocess.run([sys.executable, SERVE, "--profile", "--profile-batch-sizes", sizes, "--profile-iterations",
                    str(args.profile_iterations), "--profile-out", out], env=classifier_env(args), check=True,
                   stdout=open(os.path.join(args.out, "profile.log"), "w"), stderr=subprocess.STDOUT)
    with open(out) as f:
        return json.load(f)


def sender(port, image_bytes, arrivals, slo_s, results, connections):
    """One process: sends at the given absolute times (time.time()) over `connections` connections."""
    rng = random.Random(os.getpid())
    work = queue.Queue()
    records = []
    lock = threading.Lock()

    def run():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine = []
        while True:
            due = work.get()
            if due is None:
                break
            body = rng.randbytes(image_bytes)
            try:
                conn.request("POST", "/%s/predict" % APP, body, {"Content-Type": "application/octet-stream"})
                response = conn.getresponse()
                text = response.read()
                ok = response.status == 200 and b'"default":false' in text
            except OSError:
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                ok = False
            mine.append((time.time() - due, ok))
        conn.close()
        with lock:
            records.extend(mine)

    threads = [threading.Thread(target=run) for _ in range(connections)]
    for t in threads:
        t.start()
    for due in arrivals:
        delay = due - time.time()
        if delay > 0:
            time.sleep(delay)
        work.put(due)
    for _ in threads:
        work.put(None)
    for t in threads:
        t.join()
    good = sum(1 for latency, ok in records if ok and latency <= slo_s)
    answered = sum(1 for _, ok in records if ok)
    latencies = sorted(latency for latency, _ in records)
    results.put((len(records), answered, good, latencies))


def offered(port, image_bytes, rate, seconds, slo_s, processes, connections):
    start = time.time() + 1.0
    rng = random.Random(int(rate))
    times, t = [], start
    while True:
        t += rng.expovariate(rate)
        if t >= start + seconds:
            break
        times.append(t)
    # a connection carries one query at a time: enough of them that queries answered as late as
    # twice the SLO never wait for one, or the client, not the gateway, would make them late
    connections = max(connections, math.ceil(2 * rate * slo_s / processes))
    results = multiprocessing.Queue()
    workers = [multiprocessing.Process(target=sender, args=(port, image_bytes, times[k::processes], slo_s, results,
                                                            connections)) for k in range(processes)]
    for w in workers:
        w.start()
    sent = answered = good = 0
    latencies = []
    for _ in workers:
        s, a, g, lat = results.get()
        sent, answered, good = sent + s, answered + a, good + g
        latencies += lat
    for w in workers:
        w.join()
    latencies.sort()
    pct = (lambda q: round(latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1e3, 2)
           if latencies else None)
    return dict(offered_per_s=rate, sent=sent, answered=answered, goodput_per_s=round(good / seconds, 1),
                connections_per_process=connections,
                in_slo=round(good / sent, 4) if sent else 0.0, p50_ms=pct(0.5), p99_ms=pct(0.99))


def sweep_policy(args, policy, container_port, capacity, image_bytes):
    port, admin_port = free_port(), free_port()
    gateway = subprocess.Popen(args.gateway + ["--server.port=%d" % port, "--server.address=127.0.0.1",
                                               "--servegate.admin.port=%d" % admin_port,
                                               "--servegate.admin.address=127.0.0.1", "--servegate.cache.enabled=false",
                                               "--servegate.oip.grpc-port=0", "--servegate.containers.manager=external",
                                               "--servegate.limits.max-body-size=16MB"],
                               stdout=open(os.path.join(args.out, "gateway-%s.log" % policy), "w"),
                               stderr=subprocess.STDOUT)
    try:
        wait_http("http://127.0.0.1:%d/admin/ping" % admin_port, gateway, 120, "the gateway")
        post_json(admin_port, "/admin/add_model", {"model_name": MODEL, "model_version": "1", "input_type": "bytes",
                                                   "batch_size": -1, "scheduler": policy})
        post_json(admin_port, "/admin/add_container", {"model_name": MODEL, "model_version": "1",
                                                       "address": "127.0.0.1:%d" % container_port})
        post_json(admin_port, "/admin/add_app", {"name": APP, "input_type": "bytes", "default_output": "-1",
                                                 "latency_slo_micros": args.slo_ms * 1000,
                                                 "candidate_model_names": [MODEL]})
        wait_http("http://127.0.0.1:%d/v2/models/%s/ready" % (port, MODEL), gateway, 300, "the model")
        offered(port, image_bytes, max(1.0, capacity * 0.1), args.warmup_seconds, args.slo_ms / 1e3,
                args.processes, args.connections)
        rows = []
        for fraction in args.rates:
            row = offered(port, image_bytes, capacity * fraction, args.seconds, args.slo_ms / 1e3, args.processes,
                          args.connections)
            row.update(policy=policy, fraction_of_capacity=fraction)
            rows.append(row)
            print("%-9s %5.2fx %8.0f/s offered: goodput %8.1f/s (%5.1f %% in SLO), p50 %s ms, p99 %s ms" % (
                policy, fraction, row["offered_per_s"], row["goodput_per_s"], 100 * row["in_slo"], row["p50_ms"],
                row["p99_ms"]), flush=True)
        return rows
    finally:
        gateway.terminate()
        gateway.wait(60)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gateway", required=True, help="the gateway's command line (shell words), without settings")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--arch", default="resnet50")
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--max-batch-size", type=int, default=64)
    parser.add_argument("--profile-iterations", type=int, default=30)
    parser.add_argument("--rates", default="0.25,0.5,0.8,1,1.5,2", help="offered rates, fractions of the capacity")
    parser.add_argument("--policies", default="adaptive,symphony,clipper")
    parser.add_argument("--slo-ms", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--warmup-seconds", type=float, default=5)
    parser.add_argument("--processes", type=int, default=max(1, min(8, os.cpu_count() // 2)))
    parser.add_argument("--connections", type=int, default=32,
                        help="connections per sending process, at least (more where the rate needs them)")
    parser.add_argument("--cudnn-benchmark", action=argparse.BooleanOptionalAction, default=True,
                        help="cuDNN autotuning of each batch shape in the classifier (default on)")
    parser.add_argument("--warmup-batch-sizes", default=None,
                        help="the classifier's warm-up before ready (default: every size up to the maximum; "
                             "1 meets every other shape cold, none skips it)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    args.rates = [float(r) for r in args.rates.split(",")]
    args.gateway = shlex.split(args.gateway)
    os.makedirs(args.out, exist_ok=True)
    load_before = load_average()
    prof = profile(args)
    capacity = prof["capacity_images_per_s"] if "capacity_images_per_s" in prof else max(
        b["images_per_s"] for b in prof["batches"])
    print("in-process capacity: %.0f images/s" % capacity, flush=True)
    image_bytes = 3 * args.image_size * args.image_size
    container = subprocess.Popen([sys.executable, SERVE], env=dict(classifier_env(args), PORT="0"),
                                 stdout=subprocess.PIPE, stderr=open(os.path.join(args.out, "container.log"), "w"),
                                 text=True)
    try:
        line = container.stdout.readline()
        if not line.startswith("READY port="):
            raise SystemExit("the classifier did not start: %r (see container.log)" % line)
        container_port = int(line.strip().split("=")[1])
        rows = []
        for policy in args.policies.split(","):
            rows += sweep_policy(args, policy, container_port, capacity, image_bytes)
    finally:
        container.terminate()
        container.wait(60)
    summary = {}
    for policy in args.policies.split(","):
        mine = [r for r in rows if r["policy"] == policy]
        best = max(mine, key=lambda r: r["goodput_per_s"])
        at2x = [r for r in mine if r["offered_per_s"] >= 2 * best["offered_per_s"] * 0.999]
        summary[policy] = dict(best_goodput_per_s=best["goodput_per_s"], at_offered_per_s=best["offered_per_s"],
                               best_over_capacity=round(best["goodput_per_s"] / capacity, 3),
                               goodput_at_2x_best_over_best=round(at2x[0]["goodput_per_s"] / best["goodput_per_s"], 3)
                               if at2x and best["goodput_per_s"] else None)
    report = dict(benchmark="gpu", date_utc=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  machine="%s, %d cores" % (socket.gethostname(), os.cpu_count()), load_before=load_before,
                  load_after=load_average(), device=args.device, arch=args.arch, image_size=args.image_size,
                  cudnn_benchmark=args.cudnn_benchmark, warmup_batch_sizes=args.warmup_batch_sizes or "all",
                  slo_ms=args.slo_ms, seconds_per_rate=args.seconds, in_process=prof, capacity_images_per_s=capacity,
                  summary=summary, sweep=rows)
    with open(os.path.join(args.out, "gpu.json"), "w") as f:
        json.dump(report, f, indent=2)
    cells = "".join("<tr>%s</tr>" % "".join("<td>%s</td>" % html.escape(str(r[k])) for k in (
        "policy", "fraction_of_capacity", "offered_per_s", "goodput_per_s", "in_slo", "p50_ms", "p99_ms"))
        for r in rows)
    with open(os.path.join(args.out, "index.html"), "w") as f:
        f.write("<html><body><h1>Image classifier through the gateway</h1><p>%s, %s, %s %dx%d, SLO %d ms; "
                "in-process capacity %.0f images/s; load %s to %s</p><pre>%s</pre><table border=1><tr><th>policy"
                "</th><th>x capacity</th><th>offered/s</th><th>goodput/s</th><th>in SLO</th><th>p50 ms</th>"
                "<th>p99 ms</th></tr>%s</table></body></html>" % (
                    html.escape(report["machine"]), args.device, args.arch, args.image_size, args.image_size,
                    args.slo_ms, capacity, report["load_before"], report["load_after"],
                    html.escape(json.dumps(summary, indent=2)), cells))
    print(json.dumps(summary, indent=2))
    print("report: %s" % os.path.join(args.out, "gpu.json"))


if __name__ == "__main__":
    main()
