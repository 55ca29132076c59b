"""Speed and scale of gangkit: seven cases, one table (jobs/s, events/s, peak memory), then the targets.

Cases (``--case a,b,c,d,e,f,g``; all seven by default):

- ``a``  one-GPU jobs, Poisson arrivals, exponential run times (mean 1 h),
  64 GPUs (8 nodes x 8) at load 0.9, 1M jobs: gangkit's ``gang`` stack
  against a minimal SimPy model of the same job stream (one
  ``simpy.Resource(capacity=64)``, one process per job, started on arrival).
  Headline: gangkit's jobs/s over the SimPy model's.
- ``b``  the ``mixed`` stream (:func:`gangkit.workloads.scenarios.mixed`, load 0.85) at
  100k and 1M jobs on 1,024 nodes x 8 GPUs through ``kueue+gang``: the ratio
  of the cost per job (CPU seconds / jobs) at 1M over 100k, and the peak
  memory at 1M.
- ``c``  a standing backlog: the ``mixed`` stream at load 8 on 128 nodes x
  8 GPUs (arrivals eight times as fast as the GPUs can serve), 150k jobs,
  the run cut at the last arrival, when over 100k gangs wait; under ``gang``
  (the backlog sits in Volcano's queue) and ``kueue+gang`` (it sits in Kueue's).
  The cost per job is timed in slices of 10% of the arrivals; flat means no
  hidden scan of the pending queue (target <= 1.15). Single slices are noisy
  on a shared machine, so the verdict compares the mean of the second half
  of the slices with the first half; last/first is printed too.
- ``d``  replay of the Alibaba GPU cluster trace 2023 (openb, default pod
  list, all nodes, CPU and memory modelled) through ``kueue+gang``, with one
  ClusterQueue whose quota covers the cluster's GPUs, CPU and memory.
- ``e``  case a's stream through gangkit's *general* engine (the setting
  ``engine="general"``: the lean engine, :mod:`gangkit.engine.lean`, is off)
  against the same minimal SimPy model, run again in the same command.
  Headline: general-engine jobs/s over the SimPy model's (target >= 0.5,
  aim 1); CPU microseconds per job and per event of both. A third row,
  ``skeleton`` (:mod:`skeleton`), runs the stream on the engine's parts
  alone (its events, job and pod states, free room and books, with a FIFO
  line for the layers): what the engine costs before any layer's rule, and
  so what the layers and records add.
- ``f``  lesson 04's mix (:func:`gangkit.lessons.lesson04.mix`: one-GPU jobs
  and whole-node gangs, one pod of 8 GPUs each, on 4 nodes x 8 GPUs) at
  load 0.8, 100k jobs, through ``gang`` and ``kueue+gang`` (the scenario has
  no Kueue objects: Kueue's default setup, one ClusterQueue holding the
  cluster's 32 GPUs). Under ``gang`` the mix (one-pod jobs of two sizes) runs
  through the lean engine for several sizes, :mod:`gangkit.engine.lean.sizes`;
  a third row, ``gang/general``, runs it through the general engine
  (``engine="general"``), for comparison. Headline: CPU microseconds per job
  against the figure measured when the case was added (``F_BASELINE_US_PER_JOB``,
  when the general engine ran both stacks); target: a third of it or less. That
  baseline was measured on another machine: with case e or a in the same command,
  the verdict also reads it scaled by the SimPy model's cost per job here over its
  cost then (``F_BASELINE_SIMPY_US_PER_JOB``), a same-machine comparison.
- ``g``  the pod-by-pod layer (kube-scheduler's scheduling queue,
  :mod:`gangkit.placement.kube_scheduler`): the ``mixed`` stream at load 1.2
  on 16 nodes x 8 GPUs (seed 1) under ``stack="pod"``, 2k and 20k jobs, run
  to the end. Arrivals outpace the GPUs, so the queue grows all along the
  arrivals, ten times as long at 20k: a cost that follows the queue's length
  (work per waiting pod at each pod deletion) shows as a cost per job that
  grows with the run. Headline: the cost per job at 20k over 2k (target <= 1.15).

Every row runs in a **fresh Python subprocess**, so its peak resident memory
(``ru_maxrss``, imports included) is its own (``--same-process`` runs them all
in one process, for a quicker smoke test). ``wall_s`` and ``cpu_s`` count
only the simulation (``gangkit.simulate`` or the SimPy model's ``env.run``);
building the job stream or reading the trace is ``build_s``. Rates (jobs/s,
events/s, microseconds per job) use the process's CPU seconds: on a shared
machine they vary far less than wall seconds; ``load`` is the 1-minute load
average when the row ended. All runs use ``record="summary"``.

Usage::

    python benchmarks/run.py                  # every case at full size (under 10 min on 2 cores)
    python benchmarks/run.py --case a,d       # some cases
    python benchmarks/run.py --case e,f       # the general engine's cases (about 4 min)
    python benchmarks/run.py --quick          # small sizes, a smoke test
    python benchmarks/run.py --quick --same-process  # the same in one process (tests/architecture/test_benchmarks_smoke.py)
    python benchmarks/run.py --profile 25     # also the 25 hottest functions of each row (cProfile, stderr)
    python benchmarks/run.py --json > rows.jsonl; python benchmarks/run.py --table rows.jsonl

Benchmarks are never timed tests: the smoke test only checks that ``--quick``
prints the table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Where the trace copies are expected by default (beside the repository, as the tests look for them).
DEFAULT_TRACES = REPO.parent / "shared" / "traces"
OPENB = "alibaba-openb-2023"

CASES = "abcdefg"
FULL = {"a": 1_000_000, "b": (100_000, 1_000_000), "c": 150_000, "c_nodes": 128, "d": None, "f": 100_000,
        "g": (2_000, 20_000)}
QUICK = {"a": 2_000, "b": (1_000, 3_000), "c": 3_000, "c_nodes": 16, "d": 500, "f": 3_000, "g": (300, 1_000)}
A_GPUS, A_LOAD, A_MEAN_S = 64, 0.9, 3600.0
B_NODES, B_LOAD = 1024, 0.85
C_LOAD, C_SLICES = 8.0, 10
F_LOAD, F_STACKS = 0.8, ("gang", "kueue+gang")
TARGET_RATIO = 1.15
TARGET_RSS_MIB = 2048
TARGET_REPLAY_S = 1.0
TARGET_GENERAL_VS_SIMPY, AIM_GENERAL_VS_SIMPY = 0.5, 1.0
#: Case f's CPU microseconds per job when the case was added (2026-12-02, commit 8a5204d; full size, 100k jobs;
#: ``python benchmarks/run.py --case e,f`` on 2 shared cores, load average 1.2 to 2.7). The target is a third of it.
F_BASELINE_US_PER_JOB = {"gang": 135.8, "kueue+gang": 414.2}
F_TARGET_FACTOR = 3
G_NODES, G_LOAD, G_SEED = 16, 1.2, 1
#: The minimal SimPy model's CPU microseconds per job in that same command (case e's ``simpy-model`` row). A faster
#: machine runs both faster, so case f's verdict also reads the baseline scaled by this run's SimPy model (the rows
#: of case e or a) over this figure: a yardstick of plain Python event-loop work measured on the same machine.
F_BASELINE_SIMPY_US_PER_JOB = 22.1


# ------------------------------------------------------------------------------------------- one row each
def _rss_mib() -> float:
    import resource

    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    if sys.platform == "darwin":  # bytes there
        kib //= 1024
    return round(kib / 1024, 1)


def _profiled(profile: int, fn):
    """Run ``fn()``; with ``profile`` print its hottest functions on stderr. Returns (value, (wall s, CPU s))."""
    prof = None
    if profile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    t0, c0 = time.perf_counter(), time.process_time()
    value = fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if prof is not None:
        import io
        import pstats

        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(profile)
        print(buf.getvalue(), file=sys.stderr)
    return value, (wall, cpu)


def _row(case: str, stack: str, jobs: int, events: int, build_s: float, times: tuple[float, float], **extra) -> dict:
    """One table row. Rates use CPU seconds of the process (``cpu_s``): on a shared machine they
    vary far less than wall seconds, which are reported beside them."""
    wall, cpu = times
    row = {"case": case, "stack": stack, "jobs": jobs, "events": events, "build_s": round(build_s, 3),
           "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "jobs_per_s": round(jobs / cpu) if cpu > 0 else 0,
           "events_per_s": round(events / cpu) if cpu > 0 else 0, "us_per_job": round(1e6 * cpu / jobs, 1),
           "us_per_event": round(1e6 * cpu / events, 2) if events else 0}
    row.update(extra)
    row["peak_rss_mib"] = _rss_mib()
    row["load"] = round(os.getloadavg()[0], 1) if hasattr(os, "getloadavg") else None  # 1-min load average at the end
    return row


def _sim_row(case: str, stack: str, sc, build_s: float, profile: int, **settings) -> dict:
    from gangkit import simulate

    res, times = _profiled(profile, lambda: simulate(sc, stack=stack, record="summary", **settings))
    f = res.summary()
    return _row(case, stack, int(f["jobs_total"]), int(f["events"]), build_s, times,
                finished=int(f["jobs_finished"]), waiting=int(f["jobs_waiting_at_end"]),
                mean_wait_s=round(float(f["mean_wait_s"]), 1))


def a_stream(n: int):
    from gangkit.workloads.generators import mm_c

    return mm_c(A_LOAD * A_GPUS / A_MEAN_S, A_MEAN_S, n, seed=0)


def a_scenario(n: int):
    from gangkit import Scenario, nodes

    return Scenario(nodes(A_GPUS // 8, gpus=8), a_stream(n).jobs())


def row_a_gangkit(n: int, profile: int) -> dict:
    t0 = time.perf_counter()
    sc = a_scenario(n)
    build_s = time.perf_counter() - t0
    return _sim_row("a", "gang", sc, build_s, profile, horizon=1e15)


def row_e_general(n: int, profile: int) -> dict:
    """Case a's run with the setting ``engine="general"``: :func:`gangkit.simulate` then never takes the lean path."""
    from gangkit.engine import lean
    from gangkit.stacks import build_stack

    t0 = time.perf_counter()
    sc = a_scenario(n)
    auto = sc.with_settings(stack="gang", record="summary", horizon=1e15)
    if not lean.applies(auto, build_stack("gang", auto.settings, auto)):  # else e would time what a times
        raise SystemExit("case e: case a's stream no longer takes the lean path, so engine='general' changes nothing")
    build_s = time.perf_counter() - t0
    return _sim_row("e", "gang", sc, build_s, profile, horizon=1e15, engine="general")


def row_e_skeleton(n: int, profile: int) -> dict:
    """Case a's stream on the general engine's parts alone, with no layer (:mod:`skeleton`)."""
    from skeleton import Skeleton

    t0 = time.perf_counter()
    sk = Skeleton(a_scenario(n))
    build_s = time.perf_counter() - t0
    _, times = _profiled(profile, sk.run)
    # events: the 4 rows gangkit records for such a job (submitted, pod bound, started, finished)
    return _row("e", "skeleton", n, 4 * n, build_s, times, finished=n - sk.unfinished, waiting=sk.unfinished,
                mean_wait_s=round(sk.waited / n, 1))


def row_a_simpy(n: int, profile: int, case: str = "a") -> dict:
    """The minimal SimPy model: one Resource of 64 GPUs, one process per job (FIFO, no sessions)."""
    import simpy

    t0 = time.perf_counter()
    stream = [(j.submit_time, j.run_time) for j in a_stream(n).jobs()]
    build_s = time.perf_counter() - t0
    env = simpy.Environment()
    gpus = simpy.Resource(env, capacity=A_GPUS)
    waited = [0.0]

    def job(submit: float, run: float):
        with gpus.request() as req:
            yield req
            waited[0] += env.now - submit
            yield env.timeout(run)

    def arrivals():
        for submit, run in stream:
            if submit > env.now:
                yield env.timeout(submit - env.now)
            env.process(job(submit, run))

    env.process(arrivals())
    _, times = _profiled(profile, env.run)
    # events: the 4 rows gangkit records for such a job (submitted, pod bound, started, finished)
    return _row(case, "simpy-model", n, 4 * n, build_s, times, finished=n, waiting=0,
                mean_wait_s=round(waited[0] / n, 1))


def row_b(n: int, profile: int) -> dict:
    from gangkit.workloads import scenarios

    t0 = time.perf_counter()
    sc = scenarios.mixed(n_jobs=n, n_nodes=B_NODES, load=B_LOAD, seed=0)
    build_s = time.perf_counter() - t0
    return _sim_row("b", "kueue+gang", sc, build_s, profile, horizon=1e15)


def row_c(n: int, n_nodes: int, stack: str, profile: int) -> dict:
    """The backlog run, timed per slice of arrivals (a wrapper around the engine's submission, benchmark only)."""
    from gangkit.engine.simulation import Simulation
    from gangkit.workloads import scenarios

    t0 = time.perf_counter()
    sc = scenarios.mixed(n_jobs=n, n_nodes=n_nodes, load=C_LOAD, seed=0)
    build_s = time.perf_counter() - t0
    horizon = sc.jobs[-1].submit_time + 1e-3  # cut at the last arrival: the backlog is at its largest
    step = n // C_SLICES
    marks: list[float] = []  # CPU seconds of the process at each slice boundary
    original = Simulation._submit

    def timed_submit(self, batch):
        before = self.arrived - len(batch)
        if before // step != self.arrived // step or not marks:
            marks.append(time.process_time())
        original(self, batch)

    Simulation._submit = timed_submit
    try:
        row = _sim_row("c", stack, sc, build_s, profile, horizon=horizon)
    finally:
        Simulation._submit = original
    marks.append(time.process_time())
    slices = [round(1e6 * (b - a) / step, 1) for a, b in zip(marks, marks[1:])][:C_SLICES]
    row["slice_us_per_job"] = slices
    return row


def row_f(n: int, stack: str, profile: int, engine: str = "auto") -> dict:
    """Lesson 04's mix at load 0.8 (Kueue's default setup under ``kueue+gang``), run to the end; with
    ``engine="general"`` through the general engine (the row's stack then reads ``gang/general``)."""
    from gangkit.lessons.lesson04 import mix

    t0 = time.perf_counter()
    sc = mix(F_LOAD, n_jobs=n, seed=0)
    build_s = time.perf_counter() - t0
    row = _sim_row("f", stack, sc, build_s, profile, horizon=1e15, engine=engine)
    if engine != "auto":
        row["stack"] = f"{stack}/{engine}"
    return row


def row_g(n: int, profile: int) -> dict:
    """The ``mixed`` stream at load 1.2 on 16 nodes through the pod-by-pod layer, run to the end."""
    from gangkit.workloads import scenarios

    t0 = time.perf_counter()
    sc = scenarios.mixed(n_jobs=n, n_nodes=G_NODES, load=G_LOAD, seed=G_SEED)
    build_s = time.perf_counter() - t0
    return _sim_row("g", "pod", sc, build_s, profile, horizon=1e15)


def _openb_paths(traces: Path) -> tuple[Path, Path]:
    d = traces / OPENB
    return d / "openb_pod_list_default.csv", d / "openb_node_list_all_node.csv"


def openb_scenario(traces: Path, limit: int | None = None):
    """The openb replay: the trace's nodes and pods, one ClusterQueue covering GPUs, CPU and memory."""
    from gangkit.kueue.objects import (
        GPU,
        ClusterQueue,
        FlavorQuotas,
        KueueSetup,
        LocalQueue,
        Quota,
        ResourceFlavor,
        ResourceGroup,
    )
    from gangkit.workloads.traces import load_alibaba_openb

    pods, node_list = _openb_paths(traces)
    tl = load_alibaba_openb(pods, node_list, limit=limit)
    sc = tl.scenario()
    gpus = sum(n.gpus for n in sc.nodes)
    cpu_milli = sum(int(round((n.cpu or 0) * 1000)) for n in sc.nodes)
    memory = sum(n.memory or 0 for n in sc.nodes)
    quotas = {GPU: Quota(gpus), "cpu": Quota(cpu_milli), "memory": Quota(memory)}
    cq = ClusterQueue("cluster-queue", [ResourceGroup((GPU, "cpu", "memory"), (FlavorQuotas("default-flavor", quotas),))])
    lqs = sorted({(j.namespace or "default", j.queue) for j in sc.jobs})
    sc.kueue = KueueSetup([ResourceFlavor("default-flavor")], [cq], [LocalQueue(q, ns, cq.name) for ns, q in lqs])
    return sc


def row_d(traces: Path, limit: int | None, profile: int) -> dict:
    t0 = time.perf_counter()
    sc = openb_scenario(traces, limit)
    build_s = time.perf_counter() - t0
    return _sim_row("d", "kueue+gang", sc, build_s, profile, horizon=sc.settings.horizon)


# -------------------------------------------------------------------------------------------- the driver
def run_one(spec: dict) -> dict:
    kind, profile = spec["row"], spec.get("profile", 0)
    if kind == "a-gangkit":
        return row_a_gangkit(spec["jobs"], profile)
    if kind == "a-simpy":
        return row_a_simpy(spec["jobs"], profile)
    if kind == "b":
        return row_b(spec["jobs"], profile)
    if kind == "c":
        return row_c(spec["jobs"], spec["nodes"], spec["stack"], profile)
    if kind == "d":
        return row_d(Path(spec["traces"]), spec.get("limit"), profile)
    if kind == "e-general":
        return row_e_general(spec["jobs"], profile)
    if kind == "e-skeleton":
        return row_e_skeleton(spec["jobs"], profile)
    if kind == "e-simpy":
        return row_a_simpy(spec["jobs"], profile, case="e")
    if kind == "f":
        return row_f(spec["jobs"], spec["stack"], profile, spec.get("engine", "auto"))
    if kind == "g":
        return row_g(spec["jobs"], profile)
    raise SystemExit(f"unknown row {kind!r}")


def in_subprocess(spec: dict, profile: int, timeout: float | None) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--one", json.dumps(spec)]
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=None if profile else subprocess.PIPE,
                          text=True, env=env, timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit(f"row {spec} failed (exit {proc.returncode}):\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def plan(cases: list[str], quick: bool, traces: Path, profile: int) -> list[dict]:
    size = QUICK if quick else FULL
    specs = []
    if "a" in cases:
        specs += [{"row": "a-gangkit", "jobs": size["a"]}, {"row": "a-simpy", "jobs": size["a"]}]
    if "b" in cases:
        specs += [{"row": "b", "jobs": n} for n in size["b"]]
    if "c" in cases:
        specs += [{"row": "c", "jobs": size["c"], "nodes": size["c_nodes"], "stack": s} for s in ("gang", "kueue+gang")]
    if "d" in cases:
        if all(p.exists() for p in _openb_paths(traces)):
            specs.append({"row": "d", "traces": str(traces), "limit": size["d"]})
        else:
            print(f"# case d skipped: the openb trace is not under {traces / OPENB} (give --traces DIR)", file=sys.stderr)
    if "e" in cases:  # case a's size; the SimPy model runs again, in the same command
        specs += [{"row": "e-general", "jobs": size["a"]}, {"row": "e-skeleton", "jobs": size["a"]},
                  {"row": "e-simpy", "jobs": size["a"]}]
    if "f" in cases:
        specs += [{"row": "f", "jobs": size["f"], "stack": s} for s in F_STACKS]
        specs.append({"row": "f", "jobs": size["f"], "stack": "gang", "engine": "general"})  # the comparison
    if "g" in cases:
        specs += [{"row": "g", "jobs": n} for n in size["g"]]
    for s in specs:
        s["profile"] = profile
    return specs


def verdicts(rows: list[dict]) -> list[str]:
    """One line per case: the headline figure against its target."""
    out = []
    by = {}
    for r in rows:
        by.setdefault(r["case"], []).append(r)
    g = next((r for r in by.get("a", []) if r["stack"] == "gang"), None)
    s = next((r for r in by.get("a", []) if r["stack"] == "simpy-model"), None)
    if g and s:
        ratio = g["jobs_per_s"] / s["jobs_per_s"]
        out.append(f"(a) gangkit/SimPy jobs/s = {g['jobs_per_s']}/{s['jobs_per_s']} = {ratio:.2f} "
                   f"(target >= 1: {'met' if ratio >= 1 else 'missed'})")
    if "b" in by and len(by["b"]) >= 2:
        small, big = sorted(by["b"], key=lambda r: r["jobs"])[:: len(by["b"]) - 1]
        ratio = big["us_per_job"] / small["us_per_job"]
        rss_ok = big["peak_rss_mib"] < TARGET_RSS_MIB
        out.append(f"(b) cost per job {big['jobs']} / {small['jobs']} jobs = {big['us_per_job']}/{small['us_per_job']} us "
                   f"= {ratio:.2f} (target <= {TARGET_RATIO}: {'met' if ratio <= TARGET_RATIO else 'missed'}); "
                   f"peak memory at {big['jobs']} jobs {big['peak_rss_mib']} MiB "
                   f"(target < {TARGET_RSS_MIB}: {'met' if rss_ok else 'missed'})")
    for r in by.get("c", []):
        sl = r["slice_us_per_job"]
        ratio = sl[-1] / sl[0] if sl and sl[0] else float("nan")
        half = len(sl) // 2
        halves = (sum(sl[half:]) / len(sl[half:])) / (sum(sl[:half]) / half) if half else float("nan")
        out.append(f"(c) {r['stack']}: {r['waiting']} gangs waiting at the end; CPU us per job in slices of "
                   f"{r['jobs'] // C_SLICES} arrivals {sl}; last/first = {ratio:.2f}, second half/first half = "
                   f"{halves:.2f} (target <= {TARGET_RATIO}: {'met' if halves <= TARGET_RATIO else 'missed'})")
    for r in by.get("d", []):
        out.append(f"(d) openb replay, {r['jobs']} pods: {r['cpu_s']} CPU s ({r['wall_s']} s wall) "
                   f"(target < {TARGET_REPLAY_S} s: {'met' if r['cpu_s'] < TARGET_REPLAY_S else 'missed'}); "
                   f"reading the trace {r['build_s']} s")
    g = next((r for r in by.get("e", []) if r["stack"] == "gang"), None)
    s = next((r for r in by.get("e", []) if r["stack"] == "simpy-model"), None)
    if g and s:
        ratio = g["jobs_per_s"] / s["jobs_per_s"]
        out.append(f"(e) general engine/SimPy jobs/s = {g['jobs_per_s']}/{s['jobs_per_s']} = {ratio:.2f} "
                   f"(target >= {TARGET_GENERAL_VS_SIMPY}: {'met' if ratio >= TARGET_GENERAL_VS_SIMPY else 'missed'}; "
                   f"aim {AIM_GENERAL_VS_SIMPY}); CPU us per job {g['us_per_job']} and {s['us_per_job']}, "
                   f"per event {g['us_per_event']} and {s['us_per_event']}")
        k = next((r for r in by["e"] if r["stack"] == "skeleton"), None)
        if k is not None:  # how much of the general engine's cost is its skeleton's, and what (e) leaves the rest
            budget = s["us_per_job"] / TARGET_GENERAL_VS_SIMPY - k["us_per_job"]
            out.append(f"(e) the engine's skeleton (its events, states, capacity and books; a FIFO line for the layers): "
                       f"CPU us per job {k['us_per_job']}, {k['us_per_job'] / g['us_per_job']:.2f} of the general "
                       f"engine's; the layers and records add {g['us_per_job'] - k['us_per_job']:.1f}, and the target "
                       f"leaves them {budget:.1f} (for comparison)")
    yardstick = next((r for c in "ea" for r in by.get(c, []) if r["stack"] == "simpy-model"), None)
    for r in by.get("f", []):
        if r["stack"] not in F_BASELINE_US_PER_JOB:  # the comparison row: the same run through the general engine
            out.append(f"(f) {r['stack']}: CPU us per job {r['us_per_job']}, per event {r['us_per_event']} (for comparison)")
            continue
        base = F_BASELINE_US_PER_JOB[r["stack"]]
        target = base / F_TARGET_FACTOR
        line = (f"(f) {r['stack']}: CPU us per job {r['us_per_job']}, per event {r['us_per_event']}; current/baseline "
                f"= {r['us_per_job']}/{base} = {r['us_per_job'] / base:.2f} (target <= baseline/{F_TARGET_FACTOR} "
                f"= {target:.1f}: {'met' if r['us_per_job'] <= target else 'missed'})")
        if yardstick is not None:  # the same comparison with the baseline moved to this machine
            scaled = base * yardstick["us_per_job"] / F_BASELINE_SIMPY_US_PER_JOB
            line += (f"; with the baseline scaled to this machine by the SimPy model ({yardstick['us_per_job']} us per "
                     f"job here, {F_BASELINE_SIMPY_US_PER_JOB} then): {r['us_per_job']}/{scaled:.1f} = "
                     f"{r['us_per_job'] / scaled:.2f} (target <= {1 / F_TARGET_FACTOR:.2f}: "
                     f"{'met' if r['us_per_job'] <= scaled / F_TARGET_FACTOR else 'missed'})")
        out.append(line)
    if "g" in by and len(by["g"]) >= 2:
        small, big = sorted(by["g"], key=lambda r: r["jobs"])[:: len(by["g"]) - 1]
        ratio = big["us_per_job"] / small["us_per_job"]
        out.append(f"(g) pod: cost per job {big['jobs']} / {small['jobs']} jobs = {big['us_per_job']}/{small['us_per_job']} us "
                   f"= {ratio:.2f} (target <= {TARGET_RATIO}: {'met' if ratio <= TARGET_RATIO else 'missed'}); "
                   f"mean wait {big['mean_wait_s']} s and {small['mean_wait_s']} s")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--case", default=",".join(CASES), help=f"cases to run, comma-separated (default: {','.join(CASES)})")
    p.add_argument("--quick", action="store_true",
                   help="small sizes, a smoke test: a and e 2k jobs, b 1k and 3k, c 3k on 16 nodes, d the first 500 pods, "
                        "f 3k jobs, g 300 and 1k")
    p.add_argument("--traces", type=Path, default=DEFAULT_TRACES,
                   help="folder holding alibaba-openb-2023/ (default: ../shared/traces beside the repository)")
    p.add_argument("--timeout", type=float, default=None, help="seconds before a row is abandoned (default: none)")
    p.add_argument("--profile", type=int, default=0, metavar="N", help="print the N hottest functions of each row (cProfile) on stderr")
    p.add_argument("--same-process", action="store_true",
                   help="run every row in this process, not each in its own (quicker to start, for smoke tests; "
                        "peak memory is then the largest so far)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON lines instead of a table")
    p.add_argument("--table", type=Path, metavar="FILE", help="print the table of rows saved earlier with --json (no run)")
    p.add_argument("--one", help=argparse.SUPPRESS)  # internal: one row, JSON out
    args = p.parse_args(argv)

    if args.table:
        rows = [json.loads(line) for line in args.table.read_text().splitlines() if line.startswith("{")]
        print_table(rows, f"rows from {args.table.name}")
        return 0

    if args.one:
        print(json.dumps(run_one(json.loads(args.one))))
        return 0

    cases = [c.strip() for c in args.case.split(",") if c.strip()]
    bad = [c for c in cases if c not in CASES or len(c) != 1]
    if bad:
        p.error(f"--case: expected letters among {', '.join(CASES)} separated by commas, got {args.case!r}")
    rows = []
    for spec in plan(cases, args.quick, args.traces, args.profile):
        row = run_one(spec) if args.same_process else in_subprocess(spec, args.profile, args.timeout)
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            print(f"# done: case {row['case']} {row['stack']} x {row['jobs']} jobs in {row['wall_s']} s", file=sys.stderr, flush=True)
    if not args.json:
        print_table(rows, "quick" if args.quick else "")
    return 0


def _with_us_per_event(row: dict) -> dict:
    out = {}
    for k, v in row.items():
        out[k] = v
        if k == "us_per_job":
            out["us_per_event"] = round(1e6 * row["cpu_s"] / row["events"], 2) if row["events"] else 0
    return out


def print_table(rows: list[dict], note: str) -> None:
    import pandas as pd

    print(f"gangkit benchmarks{f' ({note})' if note else ''}: record=summary; python {sys.version.split()[0]}; "
          f"{os.cpu_count()} cores; rates per CPU second of the row's process")
    rows = [r if "us_per_event" in r else _with_us_per_event(r) for r in rows]  # rows saved before that column
    table = pd.DataFrame(rows).drop(columns=["slice_us_per_job"], errors="ignore")
    print(table.to_string(index=False))
    for line in verdicts(rows):
        print(line)


if __name__ == "__main__":
    sys.exit(main())
