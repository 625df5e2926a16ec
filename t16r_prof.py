import argparse, random, tempfile, threading, time
from collections import Counter, defaultdict
from pathlib import Path
from adapters.falkordb import TenantGraph, graph_name
from bench.chaos import WINDOW_S, deliveries
from bench import round_trips
from gateway.runtime import Runtime
from gateway.settings import Settings
from gateway.world import demo_world_path, import_world, load_world
plan = deliveries(argparse.Namespace(incidents=100, tenants=1, duplicates=0.0), random.Random(7))
spent = defaultdict(float); n = Counter()
orig = TenantGraph.rows
def rows(self, q, p=None):
    t = time.perf_counter(); r = orig(self, q, p); spent[q] += time.perf_counter() - t; n[q] += 1; return r
with tempfile.TemporaryDirectory() as d:
    s = Settings.model_validate({"data_dir": Path(d), "default_tenant": "chaos0", "port": 0, "workers": 0, "incident_window_s": WINDOW_S, "webhook_tokens": {}})
    with Runtime(s) as rt:
        import_world(rt.store.graph(graph_name("chaos0")), load_world(demo_world_path()))
        TenantGraph.rows = rows
        t0 = time.process_time(); w0 = time.perf_counter()
        import httpx
        port = rt.serve_http("127.0.0.1", 0)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            for _, b in plan: http.post("/api/v1/alerts", json=b).raise_for_status()
        print("posted", time.perf_counter() - w0, "cpu", time.process_time() - t0)
        w1 = time.perf_counter(); t1 = time.process_time()
        rt.make_worker().run(threading.Event(), burst=True)
        print("drained", time.perf_counter() - w1, "cpu", time.process_time() - t1)
        print("process cpu", time.process_time() - t0, "wall", time.perf_counter() - w0)
for q, v in sorted(spent.items(), key=lambda x: -x[1]):
    print(f"{q:25s} {n[q]:5d} {1000*v/n[q]:7.2f} ms/call {1000*v/100:7.2f} ms/incident")
