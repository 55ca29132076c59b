"""A batch/v1 CronJob, read as the Jobs it creates over the run.

Picture a train timetable: the CronJob is the timetable, each Job a train
that leaves at one of its times. gangkit does not run the timetable during
the simulation; it reads it once and lays out every train that leaves
within the run, each a batch/v1 Job submitted at its schedule time.

Modelled (Kubernetes 1.35, ``pkg/controller/cronjob`` and the batch/v1
API reference of CronJobSpec):

- ``spec.schedule``: the standard five fields (minute, hour, day of month,
  month, day of week), as the controller parses them (robfig/cron v3,
  ``ParseStandard``): ``*`` or ``?``, numbers, ``a-b`` ranges, ``/step``
  (``a/step`` runs from ``a`` to the field's end), comma lists, month names
  ``JAN``-``DEC`` and day names ``SUN``-``SAT`` (any case), and the
  descriptors ``@yearly`` (``@annually``), ``@monthly``, ``@weekly``,
  ``@daily`` (``@midnight``), ``@hourly``. When both day fields are
  restricted a day matches either; when one is ``*`` or ``?`` it must match
  both (cron's rule, and robfig's). ``@every <duration>`` and a ``TZ=`` or
  ``CRON_TZ=`` prefix are refused (the first is not modelled; the second
  the API refuses: the zone goes in ``spec.timeZone``).
- ``spec.timeZone``: an IANA zone name; the schedule matches wall-clock
  times there. Absent: the zone of kube-controller-manager, which gangkit
  takes to be UTC.
- ``spec.suspend: true``: no Job is created.
- Each Job is the ``jobTemplate``: its ``metadata.labels`` and
  ``annotations`` (so Kueue's ``kueue.x-k8s.io/queue-name`` on the
  template puts every Job in that LocalQueue), its ``spec``, in the
  CronJob's namespace, named ``<cronjob>-<scheduled time in minutes since
  the Unix epoch>`` as the controller names it (``getJobFromTemplate2``,
  ``getTimeHashInMinutes`` in ``pkg/controller/cronjob/utils.go``; its
  ``batch.kubernetes.io/cronjob-scheduled-timestamp`` annotation is not
  written: nothing gangkit reads depends on it).

Time: simulated second 0 is the earliest first schedule time, over the
input's CronJobs, at or after the origin :data:`ORIGIN` (2026-01-01 00:00
UTC, a Thursday); each Job is submitted at its schedule time measured from
there (other Jobs of the input, submitted at 0, start with it). The
CronJobs are taken as created just before the origin (the controller
creates Jobs only for schedule times after a CronJob's creation), so a
schedule time at the origin itself gets its Job. A ``gangkit/submit-time``
annotation on the job template delays each Job by that much after its
schedule time. Jobs are
made for the schedule times before the run's horizon (the Simulation's
``spec.horizon``, else gangkit's default of 30 days), at most
:data:`MAX_JOBS` per CronJob (a note says where the cap cut). A horizon
changed after reading (``gangkit run --horizon``) does not add Jobs.

Simplified, said plainly:

- the controller is never late: every Job is created at its schedule time,
  so ``startingDeadlineSeconds`` (checked: a whole number >= 0) never
  skips a run;
- ``concurrencyPolicy`` ``Forbid`` and ``Replace`` depend on whether the
  previous Job is still active when the next time comes, which the reading
  does not know: they are read only when one Job falls within the run
  (where every policy gives the same Job) and refused otherwise;
- a template whose pods name a gang object by name (a Volcano or
  scheduler-plugins PodGroup, a Kubernetes Workload or PodGroup) puts the
  pods of every Job into that one gang; gangkit models one gang per Job, so
  such a template is read only when one Job falls within the run;
- ``successfulJobsHistoryLimit`` and ``failedJobsHistoryLimit`` only
  delete finished Jobs: not read. At a daylight-saving change the
  wall-clock times of the gap or the overlap are mapped to UTC as
  Python's ``zoneinfo`` maps them (``fold=0``), not as robfig/cron does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from gangkit.manifests import core
from gangkit.model.reading import ANY, META, ManifestObject, Reader, new_object, short

__all__ = ["KNOWN_FIELDS", "MAX_JOBS", "ORIGIN", "Schedule", "parse_schedule", "read_cronjobs", "read_object"]

ORIGIN = datetime(2026, 1, 1, tzinfo=timezone.utc)  # the first schedule time at or after it is second 0
MAX_JOBS = 10_000  # Jobs made per CronJob at most
DEFAULT_HORIZON = 30 * 86400.0  # RunSettings.horizon's default, when the input has no Simulation horizon
POLICIES = ("Allow", "Forbid", "Replace")
#: the template fields whose name puts the pods of every Job into one gang object
GANG_NAMES = (("annotations", "scheduling.k8s.io/group-name"), ("labels", "scheduling.x-k8s.io/pod-group"))
GANG_POD_FIELDS = ("workloadRef", "schedulingGroup")

#: Known fields, by role (the job template's spec: a batch/v1 Job's).
KNOWN_FIELDS = {"CronJob": {
    "apiVersion": ANY, "kind": ANY, "metadata": META, "status": ANY,
    "spec": {**dict.fromkeys(["schedule", "timeZone", "startingDeadlineSeconds", "concurrencyPolicy", "suspend",
                              "successfulJobsHistoryLimit", "failedJobsHistoryLimit"], ANY),
             "jobTemplate": {"metadata": META, "spec": core.KNOWN_FIELDS["Job"]["spec"]}},
}}

# --- the schedule ---------------------------------------------------------------------------

#: (name, low, high, names) of the five fields, as robfig/cron v3 bounds them (day of week 0-6, Sunday 0)
FIELDS = (("minute", 0, 59, None), ("hour", 0, 23, None), ("day of month", 1, 31, None),
          ("month", 1, 12, ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]),
          ("day of week", 0, 6, ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]))
DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
               "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
SEARCH_YEARS = 5  # a schedule that matches no time within 5 years matches none (robfig gives up likewise)


@dataclasses.dataclass(frozen=True)
class Schedule:
    """The sets of minutes, hours, days of month, months and days of week a schedule allows.

    ``dom_star``/``dow_star``: the day field was ``*`` or ``?`` (then a day must match both fields, else either).
    """

    minutes: frozenset
    hours: frozenset
    days: frozenset
    months: frozenset
    weekdays: frozenset
    dom_star: bool
    dow_star: bool

    def day_matches(self, t: datetime) -> bool:
        dom, dow = t.day in self.days, (t.weekday() + 1) % 7 in self.weekdays
        return dom and dow if self.dom_star or self.dow_star else dom or dow

    def next_after(self, t: datetime) -> datetime | None:
        """The first time after ``t`` (a naive wall-clock time) that the schedule matches, or None.

        Steps by month, day, hour, then minute, so one call costs at most a
        few hundred steps whatever the schedule.

        >>> parse_schedule("30 2 * * MON").next_after(datetime(2026, 1, 1))
        datetime.datetime(2026, 1, 5, 2, 30)
        """
        t = t.replace(second=0, microsecond=0) + timedelta(minutes=1)
        last = t.year + SEARCH_YEARS
        while t.year <= last:
            if t.month not in self.months:
                t = datetime(t.year + t.month // 12, t.month % 12 + 1, 1)
            elif not self.day_matches(t):
                t = datetime(t.year, t.month, t.day) + timedelta(days=1)
            elif t.hour not in self.hours:
                t = datetime(t.year, t.month, t.day, t.hour) + timedelta(hours=1)
            elif t.minute not in self.minutes:
                t += timedelta(minutes=1)
            else:
                return t
        return None


def parse_schedule(text: str) -> Schedule:
    """A five-field schedule (or a descriptor); ValueError says what is wrong.

    >>> sorted(parse_schedule("*/20 9-10 * * *").minutes), sorted(parse_schedule("@hourly").hours)[:2]
    ([0, 20, 40], [0, 1])
    """
    text = text.strip()
    if text.startswith(("TZ=", "CRON_TZ=")):
        raise ValueError("a TZ= or CRON_TZ= prefix is not allowed (the API refuses it): set spec.timeZone")
    if text.startswith("@every"):
        raise ValueError("@every is not modelled: write the five fields")
    if text.startswith("@"):
        if text.lower() not in DESCRIPTORS:
            raise ValueError(f"unknown descriptor {text!r} (expected one of {', '.join(DESCRIPTORS)})")
        text = DESCRIPTORS[text.lower()]
    parts = text.split()
    if len(parts) != 5:
        raise ValueError(f"expected 5 fields (minute hour day-of-month month day-of-week), got {len(parts)}")
    sets = [_field(part, *spec) for part, spec in zip(parts, FIELDS)]
    return Schedule(*(frozenset(s) for s, _ in sets), dom_star=sets[2][1], dow_star=sets[4][1])


def _field(text: str, name: str, low: int, high: int, names: list | None) -> tuple[set, bool]:
    """One field: its allowed values, and whether it was ``*``/``?`` (a star, in robfig's sense)."""
    values: set[int] = set()
    star = False
    for item in text.split(","):
        bounds, _, step_text = item.partition("/")
        if bounds in ("*", "?"):
            start, end, star = low, high, star or not step_text or step_text == "1"
        else:
            a, dash, b = bounds.partition("-")
            start = _value(a, name, low, high, names)
            end = _value(b, name, low, high, names) if dash else (high if step_text else start)
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) == 0:
                raise ValueError(f"{name}: expected a step of 1 or more after '/', got {step_text!r}")
            step = int(step_text)
        if start > end:
            raise ValueError(f"{name}: range {bounds!r} runs backwards")
        values.update(range(start, end + 1, step))
    return values, star


def _value(text: str, name: str, low: int, high: int, names: list | None) -> int:
    if names is not None and text.upper() in names:
        return names.index(text.upper()) + low
    if not text.isdigit() or not low <= int(text) <= high:
        allowed = f"{low}-{high}" + (f" or {names[0]}-{names[-1]}" if names else "")
        raise ValueError(f"{name}: expected {allowed}, got {text!r}")
    return int(text)


# --- reading ---------------------------------------------------------------------------------


def read_object(r: Reader, doc: Mapping, where: str, role: str) -> ManifestObject | None:
    """Check one CronJob's metadata and unknown fields (its spec is read in :func:`read_cronjobs`)."""
    return r.check_object(doc, where, KNOWN_FIELDS[role])


@dataclasses.dataclass
class _Plan:
    o: ManifestObject
    schedule: Schedule
    zone: Any
    first: datetime | None  # the first schedule time at or after the origin (UTC), None: never


def read_cronjobs(r: Reader, cronjobs: list[ManifestObject], simulations: list[ManifestObject],
                  read_job: Callable[[ManifestObject], Any]) -> list:
    """The Jobs the input's CronJobs create within the run (gangkit Jobs with their submit times).

    ``read_job`` reads one batch/v1 Job object (the loader's Job reader);
    each CronJob's first Job is read with it, the others are copies with
    their own name and submit time.
    """
    plans = [p for p in (_plan(r, o) for o in cronjobs) if p is not None]
    starts = [p.first for p in plans if p.first is not None]
    if not starts:
        return []
    zero = min(starts)
    horizon = _horizon(simulations)
    jobs = []
    for p in plans:
        times = _times(p, zero, horizon)
        if not times:
            r.notes.append(f"{p.o.label}: no schedule time falls within the run ({horizon:g} s from "
                           f"{_iso(zero)}): it creates no Job")
            continue
        if len(times) > 1 and not _one_job_only(r, p.o, len(times)):
            continue
        jobs.extend(_jobs(r, p.o, times, zero, read_job))
        if len(times) == MAX_JOBS:
            r.notes.append(f"{p.o.label}: gangkit makes at most {MAX_JOBS:,} Jobs of one CronJob; the last is "
                           f"submitted at {(times[-1] - zero).total_seconds():g} s, before the horizon")
    if jobs and zero != ORIGIN:  # said when the run's clock is not the origin's: its second 0 moved
        r.notes.append(f"CronJobs: second 0 of the run is {_iso(zero)}, the earliest first schedule time at or "
                       f"after {_iso(ORIGIN)}; {len(jobs)} Job(s) made from {len(plans)} CronJob(s)")
    return jobs


def _plan(r: Reader, o: ManifestObject) -> _Plan | None:
    obj = o.label
    spec = r.mapping(o.doc.get("spec"), obj, "spec")
    text = spec.get("schedule")
    if not isinstance(text, str) or not text.strip():
        r.error(obj, "spec.schedule", f"expected a cron schedule such as \"0 * * * *\" (it is required), got {short(text)}")
        return None
    try:
        schedule = parse_schedule(text)
    except ValueError as e:
        r.error(obj, "spec.schedule", f"{e}, in {text!r}")
        return None
    zone: Any = timezone.utc
    if spec.get("timeZone") is not None:
        try:
            zone = ZoneInfo(spec["timeZone"]) if isinstance(spec["timeZone"], str) else None
        except (ZoneInfoNotFoundError, ValueError):
            zone = None
        if zone is None:
            r.error(obj, "spec.timeZone", f"expected a time zone name such as \"Europe/Paris\" or \"Etc/UTC\", "
                                          f"got {short(spec['timeZone'])}")
            return None
    if spec.get("startingDeadlineSeconds") is not None:
        r.whole(spec["startingDeadlineSeconds"], obj, "spec.startingDeadlineSeconds", 0, 2**63 - 1)
    policy = spec.get("concurrencyPolicy", "Allow")
    if policy not in POLICIES:
        r.error(obj, "spec.concurrencyPolicy", f"expected one of {', '.join(POLICIES)}, got {short(policy)}")
        return None
    suspend = spec.get("suspend", False)
    if not isinstance(suspend, bool):
        r.error(obj, "spec.suspend", f"expected true or false, got {short(suspend)}")
        return None
    template = spec.get("jobTemplate")
    if not isinstance(template, Mapping) or not isinstance(template.get("spec"), Mapping):
        r.error(obj, "spec.jobTemplate", f"expected a Job template with a spec (it is required), got {short(template)}")
        return None
    if suspend:
        r.notes.append(f"{obj}: spec.suspend is true: the controller creates no Job")
        return None
    local = _local(ORIGIN, zone) - timedelta(minutes=1)
    first = schedule.next_after(local)
    if first is None:
        r.notes.append(f"{obj}: schedule {text!r} matches no time within {SEARCH_YEARS} years: it creates no Job")
    return _Plan(o, schedule, zone, None if first is None else _utc(first, zone))


def _times(p: _Plan, zero: datetime, horizon: float) -> list[datetime]:
    """The schedule times (UTC) from ``zero`` (inclusive) to the horizon (exclusive), at most :data:`MAX_JOBS`."""
    out: list[datetime] = []
    end = zero + timedelta(seconds=horizon)
    t = p.first
    while t is not None and t < end and len(out) < MAX_JOBS:
        if t >= zero:
            out.append(t)
        local = p.schedule.next_after(_local(t, p.zone))
        t = None if local is None else _utc(local, p.zone)
    return out


def _one_job_only(r: Reader, o: ManifestObject, count: int) -> bool:
    """Whether a CronJob of more than one Job in the run is readable (see the module's simplifications)."""
    spec = o.doc["spec"]
    policy = spec.get("concurrencyPolicy", "Allow")
    if policy != "Allow":
        r.error(o.label, "spec.concurrencyPolicy", f"{policy} is not modelled when more than one Job falls within the "
                f"run ({count} here): whether a run is skipped or replaced depends on the previous Job still being "
                "active, which gangkit reads before the run; use Allow, or a horizon with one schedule time")
        return False
    template = spec["jobTemplate"]
    pod_template = template["spec"].get("template")
    tmeta = pod_template.get("metadata") if isinstance(pod_template, Mapping) else None
    pod = pod_template.get("spec") if isinstance(pod_template, Mapping) else None
    where = None
    for meta, base in ((template.get("metadata"), "spec.jobTemplate.metadata"),
                       (tmeta, "spec.jobTemplate.spec.template.metadata")):
        for part, key in GANG_NAMES:
            if isinstance(meta, Mapping) and isinstance(meta.get(part), Mapping) and key in meta[part]:
                where = where or f"{base}.{part}.{key}"
    for key in GANG_POD_FIELDS:
        if isinstance(pod, Mapping) and pod.get(key) is not None:
            where = where or f"spec.jobTemplate.spec.template.spec.{key}"
    if where is not None:
        r.error(o.label, where, f"names one gang object for the pods of all its {count} Jobs in the run; gangkit "
                "models one gang per Job (a Volcano Job-less PodGroup per Job needs no name: leave it out)")
        return False
    return True


def _jobs(r: Reader, o: ManifestObject, times: list[datetime], zero: datetime,
          read_job: Callable[[ManifestObject], Any]) -> list:
    spec = o.doc["spec"]
    template = spec["jobTemplate"]
    meta = template.get("metadata") if isinstance(template.get("metadata"), Mapping) else {}
    name = lambda t: f"{o.name}-{int(t.timestamp()) // 60}"  # noqa: E731  (the controller's getJobName)
    job_meta = {k: v for k, v in meta.items() if k in ("labels", "annotations")}
    job_meta |= {"name": name(times[0])} | ({"namespace": o.namespace} if o.namespace else {})
    doc = {"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta, "spec": template["spec"]}
    before = len(r.problems)
    first = read_job(dataclasses.replace(new_object(doc, f"{o.where}, spec.jobTemplate"), role="Job",
                                         namespaced=True))
    if first is None or len(r.problems) > before:
        return []
    out = []
    for t in times:
        out.append(dataclasses.replace(first, name=name(t), submit_time=first.submit_time + (t - zero).total_seconds(),
                                       labels=dict(first.labels)))
    return out


def _horizon(simulations: list[ManifestObject]) -> float:
    spec = simulations[0].doc.get("spec") if simulations else None
    value = spec.get("horizon") if isinstance(spec, Mapping) else None
    seconds = None if value is None else Reader("horizon").duration(value, simulations[0].label, "spec.horizon")
    return float(seconds) if seconds else DEFAULT_HORIZON  # absent, or refused (reported by the Simulation's reader)


def _local(t: datetime, zone: Any) -> datetime:
    return t.astimezone(zone).replace(tzinfo=None)


def _utc(local: datetime, zone: Any) -> datetime:
    return local.replace(tzinfo=zone).astimezone(timezone.utc)


def _iso(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")
