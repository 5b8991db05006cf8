"""Registers the compose demo through the gateway's admin API (one-shot; Python stdlib only, so it
runs on the public python image and on the locally made base alike). The admin token comes from
SERVEGATE_ADMIN_TOKEN; SERVEGATE_QUERY_PORT is the host port the gateway's query API is published on.

App `fashion` (floats, Exp4 ensemble) linking the Java ONNX CNN `fmnist-cnn` and the Python
scikit-learn model `fmnist-sklearn`, each with its container's address. Re-running it is harmless:
409 (already there) counts as done.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

ADMIN = os.environ.get("ADMIN_URL", "http://gateway:1338")
ONNX = os.environ.get("ONNX_ADDRESS", "onnx:8001")
SKLEARN = os.environ.get("SKLEARN_ADDRESS", "sklearn:8001")
TOKEN = os.environ.get("SERVEGATE_ADMIN_TOKEN", "")
QUERY_PORT = os.environ.get("SERVEGATE_QUERY_PORT", "1337")
AUTH = {"Authorization": "Bearer " + TOKEN} if TOKEN else {}


def post(endpoint, body):
    req = urllib.request.Request(ADMIN + "/admin/" + endpoint, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json", **AUTH}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            print(endpoint, r.status, flush=True)
    except urllib.error.HTTPError as e:
        if e.code != 409:
            sys.exit(f"{endpoint}: HTTP {e.code} {e.read().decode()}")
        print(endpoint, "409 (already registered)", flush=True)


for attempt in range(120):  # wait for the gateway's admin port
    try:
        urllib.request.urlopen(urllib.request.Request(ADMIN + "/admin/ping", headers=AUTH), timeout=2).read()
        break
    except OSError:
        time.sleep(1)
else:
    sys.exit("the gateway's admin API never answered at " + ADMIN)

for name, image, address in (("fmnist-cnn", "servegate/onnx", ONNX),
                             ("fmnist-sklearn", "servegate/sklearn", SKLEARN)):
    post("add_model", {"model_name": name, "model_version": "1", "labels": ["fashion-mnist"],
                       "input_type": "floats", "container_name": image, "model_data_path": "", "batch_size": -1})
    post("add_container", {"model_name": name, "model_version": "1", "address": address})
post("add_app", {"name": "fashion", "input_type": "floats", "default_output": "-1",
                 "latency_slo_micros": 1000000, "selection_policy": "exp4"})
post("add_model_links", {"app_name": "fashion", "model_names": ["fmnist-cnn", "fmnist-sklearn"]})
print(f"demo registered: POST http://localhost:{QUERY_PORT}/fashion/predict {{\"input\": [784 floats in 0..1]}}")
