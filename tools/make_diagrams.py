"""Draw the course's two diagrams as SVG, and check that the committed files are what this draws.

A diagram drawn by hand goes stale the day a name changes; one drawn by a program can be
checked like a test. ``python tools/make_diagrams.py`` writes

- ``course/figures/stack_path.svg`` (lesson 05): one job's path through the layered stack, one
  row per layer (Kueue, its admission checks, the job controller, the gang layer, placement,
  node supply), time running left to right, and under the path a bracket for each of gangkit's
  wait buckets. The bucket names are read from the library (``KueueLayer.name``,
  ``ProvisioningRequestCheck.name``, the placement layers' ``name``,
  ``gangkit.engine.waits.STAGE_BUCKETS``), so the picture and the lesson's tables use the same
  words; the stretches follow ``gangkit/engine/waits.py``, and the layers' conditions are the
  ones lesson 05 names (Kueue v0.19: ``QuotaReserved``, ``Admitted``; the ProvisioningRequest's
  ``Provisioned``; Karpenter v1 NodeClaims). Stretch lengths are not to scale.
- ``course/figures/scheduling_framework.svg`` (lesson 02): the extension points of the
  kube-scheduler framework that one pod passes (Kubernetes 1.35), and where the gang plugins act.

``--check`` writes nothing and exits with status 1, naming the file, when a committed diagram
differs from what this program draws (edited by hand, or stale). The test suite runs it.

Sources of the second diagram (every plugin-to-extension-point claim):

- the extension points and their order: the Kubernetes "Scheduling Framework" concept page
  (kubernetes.io, docs/concepts/scheduling-eviction/scheduling-framework): PreEnqueue, QueueSort,
  PreFilter, Filter, PostFilter, PreScore, Score, NormalizeScore, Reserve (with Unreserve),
  Permit; then the binding cycle, which starts by waiting for Permit's approval, PreBind, Bind,
  PostBind;
- coscheduling: kubernetes-sigs/scheduler-plugins ``pkg/coscheduling/coscheduling.go``
  (v0.35.4-devel), which implements QueueSort, PreFilter, PostFilter, Permit and Reserve
  (Unreserve rejects the group's waiting pods); defaults ``permitWaitingTimeSeconds`` 60 and
  ``podGroupRejectPercentage`` 10 from ``apis/config/v1/defaults.go``;
- Kubernetes' own GangScheduling plugin, 1.35 alpha (KEP-4671, feature gates ``GenericWorkload``
  and ``GangScheduling``, API ``scheduling.k8s.io/v1alpha1``): the "Gang Scheduling" concept page
  of 1.35 and the plugin ``pkg/scheduler/framework/plugins/gangscheduling`` of that API version,
  which implements PreEnqueue (wait for the Workload and ``minCount`` pods), Reserve (count the
  pod as assumed; Unreserve forgets it) and Permit (wait until ``minCount`` pods are assumed or
  bound, 5 minutes, fixed). 1.36 reworks it (a PodGroup scheduling cycle); not drawn;
- Volcano (v1.15) is a scheduler of its own with sessions and actions
  (``pkg/scheduler/actions``), as ``gangkit/volcano/scheduler.py`` describes.

Simplified there: the default plugins named (SchedulingGates, PrioritySort, NodeResourcesFit,
DefaultPreemption, VolumeBinding, DefaultBinder) are examples, not each point's full default set;
``WaitOnPermit`` is drawn as a step, though it is the framework waiting, not an extension point.

Drawn as plain SVG text with a few helpers (box, line, arrow, label, bracket), with no plotting
library, so that two runs write the same bytes. Colours are the Okabe-Ito palette (safe for
colour-blind readers) and tints and shades of it; every coloured thing also has a label, so colour
never carries meaning alone. Text is 12 px or more on a white background, 900 px wide.

Layout is checked before anything is written: each label's width is estimated from DejaVu Sans'
character widths (a wide font: the usual sans-serif fonts are narrower), and a label that
overlaps another, leaves its box or leaves the picture is an error.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gangkit.engine.waits import STAGE_BUCKETS  # noqa: E402
from gangkit.kueue.layer import KueueLayer  # noqa: E402
from gangkit.kueue.provisioning import ProvisioningRequestCheck  # noqa: E402
from gangkit.placement.kube_scheduler import KubeScheduler  # noqa: E402
from gangkit.volcano.scheduler import VolcanoGang  # noqa: E402

FIGURES = ROOT / "course" / "figures"
WIDTH = 900

#: The Okabe-Ito palette (Okabe and Ito, "Color Universal Design").
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}
INK = "#222222"  # text and outlines
MUTED = "#555555"  # secondary text (7.5:1 on white)
RULE = "#BBBBBB"  # separators
LANE = "#F3F3F3"  # every other row

SANS = "'DejaVu Sans', Verdana, Arial, Helvetica, sans-serif"
MONO = "'DejaVu Sans Mono', Menlo, Consolas, monospace"


def mix(colour: str, share: float, towards: str = "#FFFFFF") -> str:
    """``colour`` moved ``1 - share`` of the way towards ``towards`` (white: a tint, black: a shade)."""
    a = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    b = [int(towards[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x * share + y * (1 - share)):02X}" for x, y in zip(a, b))


# --- text widths --------------------------------------------------------------------------
#: DejaVu Sans advance widths in em (measured from the font, rounded up to 0.02), by character.
_EM = {chars: em for em, chars in (
    (0.30, "ijlIJ'"), (0.32, ",. \u00a0"), (0.34, "/:;\\|"), (0.36, "f-"), (0.40, "t!()[]"), (0.42, "r"),
    (0.48, '"'), (0.50, "*_`"), (0.52, "sz"), (0.54, "?"), (0.58, "ckFL"), (0.60, "vxyP"), (0.62, "aeoTY"),
    (0.64, "0123456789bdghnpquES${}"), (0.66, "K"), (0.68, "AVZ"), (0.70, "BCRX"), (0.74, "U"), (0.76, "HN"),
    (0.78, "DG&"), (0.80, "OQ"), (0.82, "w"), (0.84, "#<>^~"), (0.86, "M+="), (0.96, "%"), (0.98, "m"),
)}
WIDTHS = {c: em for chars, em in _EM.items() for c in chars}
OTHER = 1.0  # anything else (arrows, dashes, W, @)
MARGIN = 1.06  # Verdana, the next font in the list, is a few per cent wider
BOLD = 1.13  # DejaVu Sans Bold against the regular face
MONO_EM = 0.61  # DejaVu Sans Mono, Menlo: 0.60 em a character


def text_width(s: str, size: float, *, bold: bool = False, mono: bool = False) -> float:
    """Estimated width in px of ``s`` set in ``size`` px (an upper bound for common sans fonts)."""
    if mono:
        return len(s) * MONO_EM * size * (1.05 if bold else 1.0)
    em = sum(WIDTHS.get(c, OTHER) for c in s)
    return em * size * MARGIN * (BOLD if bold else 1.0)


def wrap(s: str, width: float, size: float, *, bold: bool = False) -> list[str]:
    """``s`` broken into lines no wider than ``width`` px (by the estimate above)."""
    lines: list[str] = []
    for para in s.split("\n"):
        line = ""
        for word in para.split(" "):
            trial = f"{line} {word}" if line else word
            if line and text_width(trial, size, bold=bold) > width:
                lines.append(line)
                line = word
            else:
                line = trial
        lines.append(line)
    return lines


# --- the canvas ---------------------------------------------------------------------------
class LayoutError(ValueError):
    """A label overlaps another label, leaves its box, or leaves the picture."""


@dataclass(frozen=True)
class Box:
    """An axis-aligned rectangle: left, top, right, bottom (px)."""

    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: Box) -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1

    def holds(self, other: Box) -> bool:
        return self.x0 <= other.x0 and self.y0 <= other.y0 and other.x1 <= self.x1 and other.y1 <= self.y1


def _n(x: float) -> str:
    """A coordinate as SVG text: at most one decimal, no trailing zeros (the same on every machine)."""
    s = f"{round(x, 1):.1f}".rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


@dataclass
class Canvas:
    """An SVG picture being drawn: its elements in order, and every label's estimated box."""

    name: str
    title: str
    desc: str
    width: float = WIDTH
    height: float = 0.0  # set when the drawing is done
    parts: list[str] = field(default_factory=list)
    labels: list[tuple[str, Box, Box | None]] = field(default_factory=list)

    def rect(self, x, y, w, h, *, fill="none", stroke="none", sw=1.0, rx=0.0, dash: str | None = None) -> Box:
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}" rx="{_n(rx)}" '
                          f'fill="{fill}" stroke="{stroke}" stroke-width="{_n(sw)}"{extra}/>')
        return Box(x, y, x + w, y + h)

    def line(self, points, *, stroke=INK, sw=1.5, dash: str | None = None, arrow: bool = False) -> None:
        d = "M" + " L".join(f"{_n(x)} {_n(y)}" for x, y in points)
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        end = f' marker-end="url(#{self.name}-arrow)"' if arrow else ""
        self.parts.append(f'<path d="{d}" fill="none" stroke="{stroke}" stroke-width="{_n(sw)}" '
                          f'stroke-linejoin="round"{extra}{end}/>')

    def dot(self, x, y, r, *, fill=INK) -> None:
        self.parts.append(f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(r)}" fill="{fill}"/>')

    def text(self, x, y, s, *, size=12, bold=False, mono=False, anchor="start", fill=INK,
             inside: Box | None = None, cls: str | None = None) -> Box:
        """One line of text with its baseline at ``y``; ``inside`` is the box it must stay in."""
        w = text_width(s, size, bold=bold, mono=mono)
        x0 = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
        box = Box(x0, y - 0.78 * size, x0 + w, y + 0.24 * size)
        self.labels.append((s, box, inside))
        attrs = [f'x="{_n(x)}"', f'y="{_n(y)}"', f'font-size="{_n(size)}"']
        if bold:
            attrs.append('font-weight="bold"')
        if mono:
            attrs.append(f'font-family="{MONO}"')
        if anchor != "start":
            attrs.append(f'text-anchor="{anchor}"')
        if fill != INK:
            attrs.append(f'fill="{fill}"')
        if cls:
            attrs.append(f'class="{cls}"')
        self.parts.append(f"<text {' '.join(attrs)}>{escape(s)}</text>")
        return box

    def lines(self, x, y, ss, *, leading=15, **kw) -> float:
        """Several lines of text from baseline ``y`` down; returns the baseline after the last."""
        for s in ss:
            self.text(x, y, s, **kw)
            y += leading
        return y

    def arrow(self, points, **kw) -> None:
        self.line(points, arrow=True, **kw)

    def bracket(self, x0, x1, y, *, stroke=INK, depth=6) -> None:
        """A bracket under the stretch ``x0..x1``: ticks up at both ends, a nib down in the middle."""
        xm = (x0 + x1) / 2
        self.line([(x0, y - depth), (x0, y), (x1, y), (x1, y - depth)], stroke=stroke, sw=1.5)
        self.line([(xm, y), (xm, y + depth)], stroke=stroke, sw=1.5)

    def validate(self) -> None:
        """Raise :class:`LayoutError` listing every label that overlaps, leaves its box or the picture."""
        page = Box(0, 0, self.width, self.height)
        problems = []
        for i, (s, box, inside) in enumerate(self.labels):
            if not page.holds(box):
                problems.append(f"{s!r} leaves the picture")
            if inside is not None and not inside.holds(box):
                problems.append(f"{s!r} leaves its box")
            for t, other, _ in self.labels[i + 1:]:
                if box.overlaps(other):
                    problems.append(f"{s!r} overlaps {t!r}")
        if problems:
            raise LayoutError(f"{self.name}: " + "; ".join(problems))

    def svg(self) -> str:
        self.validate()
        w, h = _n(self.width), _n(self.height)
        head = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
            f'role="img" aria-labelledby="{self.name}-title {self.name}-desc" font-family="{SANS}" '
            f'font-size="12" fill="{INK}">',
            f'<title id="{self.name}-title">{escape(self.title)}</title>',
            f'<desc id="{self.name}-desc">{escape(self.desc)}</desc>',
            "<defs>",
            f'<marker id="{self.name}-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            f'markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="{INK}"/></marker>',
            "</defs>",
            f'<rect x="0" y="0" width="{w}" height="{h}" fill="#FFFFFF"/>',
        ]
        return "\n".join(head + self.parts + ["</svg>"]) + "\n"


# --- diagram 1: a job's path through the layered stack (lesson 05) ------------------------------
#: The wait buckets in the order a job meets them (gangkit.engine.waits), and their colours.
QUOTA = KueueLayer.name
CHECK = ProvisioningRequestCheck.name
PLACEMENT = KubeScheduler.name
assert VolcanoGang.name == PLACEMENT, "the placement layers share one bucket name"
NODE_STAGES = ("launched", "registered", "initialized", "image_pulled")
BUCKETS = (QUOTA, CHECK, PLACEMENT) + tuple(STAGE_BUCKETS[s] for s in NODE_STAGES)
BUCKET_COLOURS = dict(zip(BUCKETS, (
    OKABE_ITO["yellow"], OKABE_ITO["orange"], OKABE_ITO["vermillion"], OKABE_ITO["sky_blue"],
    OKABE_ITO["blue"], mix(OKABE_ITO["blue"], 0.6, "#000000"), OKABE_ITO["black"],
)))


def stack_path() -> Canvas:
    """Lesson 05's picture: where a job waits, layer by layer, and which bucket each stretch goes to."""
    quota, check, placement, launch, registration, initialization, pull = BUCKETS
    c = Canvas(
        "stack-path",
        title="A job's path through the layered stack, and the wait bucket of each stretch",
        desc=(
            "One row per layer, time running left to right. The job is submitted and waits in Kueue "
            f"(LocalQueue, then ClusterQueue) until its quota is reserved: bucket {quota}. An admission "
            "check such as a ProvisioningRequest, served by cluster-autoscaler, holds it until the check "
            f"is ready and Kueue admits it: bucket {check}. The job controller unsuspends the Job and "
            "creates its pods. The gang layer (a PodGroup in Volcano or coscheduling) and the placement "
            "layer (kube-scheduler, or Volcano) try to bind the pods to nodes; while they do not all fit "
            f"and no node is coming for them the job is in bucket {placement}. When a node supplier "
            "(Karpenter NodeClaims, or a cluster-autoscaler scale-up) launches nodes for the pods, the "
            f"wait goes to the bucket of the stage the node has not reached yet: {launch}, "
            f"{registration}, {initialization}, {pull}. Then the pods are bound and the job runs. "
            "The buckets add up to the whole wait, wait_s."
        ),
    )
    c.text(12, 26, "A job's path through the layered stack, and the bucket of every second it waits",
           size=16, bold=True)
    c.text(12, 46, "One row per layer; time runs left to right (not to scale). Each stretch of the wait "
                   "is charged to one bucket, below.", fill=MUTED)

    lanes = [  # (name, description lines, height)
        ("Kueue", ["LocalQueue → ClusterQueue"], 50),
        ("Admission checks", ["ProvisioningRequest,", "cluster-autoscaler"], 56),
        ("Job controller", ["unsuspends the Job,", "creates its pods"], 56),
        ("Gang layer", ["PodGroup: Volcano,", "coscheduling"], 56),
        ("Placement", ["kube-scheduler, or Volcano,", "binds pods to nodes"], 56),
        ("Node supply", ["Karpenter NodeClaims, or", "cluster-autoscaler scale-up"], 64),
    ]
    top, tops, mids = 62, [], []
    left, label_w = 8, 206
    for i, (name, desc, h) in enumerate(lanes):
        if i % 2 == 0:
            c.rect(left, top, WIDTH - 2 * left, h, fill=LANE)
        cell = Box(left, top, left + label_w, top + h)
        c.text(16, top + 19, name, size=13, bold=True, inside=cell)
        c.lines(16, top + 35, desc, leading=14, fill=MUTED, inside=cell)
        tops.append(top)
        mids.append(top + (30 if i == len(lanes) - 1 else h - 16))  # the path runs below the row's notes
        top += h
    bottom = top
    c.line([(left + label_w, 62), (left + label_w, bottom)], stroke=RULE, sw=1)
    kueue, adm, jobc, gang, place, nodes = range(6)

    # the stretches, left to right: name -> (x0, x1)
    x = 230
    widths = {quota: 75, check: 95, placement: 95, launch: 65, registration: 90, initialization: 90, pull: 60}
    span = {}
    for b in BUCKETS:
        span[b] = (x, x + widths[b])
        x += widths[b]
    end = x

    def stretch(bucket, row):
        x0, x1 = span[bucket]
        y = mids[row]
        c.rect(x0, y - 5, x1 - x0, 10, fill=BUCKET_COLOURS[bucket], stroke=INK, sw=1)

    def step(xa, row_a, row_b):
        """The job moves from one layer's row to another's at ``xa``."""
        c.arrow([(xa, mids[row_a] + (5 if row_b > row_a else -5)), (xa, mids[row_b] + (-7 if row_b > row_a else 7))],
                sw=1.5)

    def note(x0, row, s, **kw):
        return c.text(x0, tops[row] + 18, s, **kw)

    # Kueue: from submission to quota reservation
    x0, x1 = span[quota]
    stretch(quota, kueue)
    c.dot(x0, mids[kueue], 5)
    note(x0 - 4, kueue, "submitted: pending, until QuotaReserved")
    step(x1, kueue, adm)
    # the admission check: quota reserved, until Admitted
    x0, x1 = span[check]
    stretch(check, adm)
    note(x0 + 4, adm, "ProvisioningRequest Provisioned → Admitted")
    xs = x0 + 40  # the check asks cluster-autoscaler for the whole gang's nodes
    c.arrow([(xs, mids[adm] + 6), (xs, mids[nodes] - 4)], stroke=MUTED, sw=1.5, dash="5 4")
    c.lines(xs + 6, mids[nodes] - 3, ["scale-up for", "the whole gang"], leading=14, fill=MUTED)
    # admitted: the Job is unsuspended and its pods are created, at once
    step(x1, adm, gang)
    c.rect(x1 - 5, mids[jobc] - 5, 10, 10, fill="#FFFFFF", stroke=INK, sw=1.5)
    note(x1 + 10, jobc, "Admitted: Job unsuspended, pods created")
    # the gang layer and placement: the pods do not all fit, and no node is coming yet
    x0, x1 = span[placement]
    stretch(placement, gang)
    note(x0 + 4, gang, "the gang does not fit; no node is coming for it yet")
    step(x1, gang, nodes)
    note(x1 + 8, place, "pods Unschedulable: a supplier launches nodes")
    # node supply: the nodes launched for the job, stage by stage
    for i, (stage, bucket) in enumerate(zip(NODE_STAGES, BUCKETS[3:])):
        stretch(bucket, nodes)
        xe = span[bucket][1]
        c.line([(xe, mids[nodes] - 9), (xe, mids[nodes] + 9)], sw=2)
        y = mids[nodes] - 14 if i % 2 == 0 else mids[nodes] + 22
        c.text(xe, y, stage, mono=True, anchor="middle")
    # bound, then running
    c.arrow([(end, mids[nodes] - 9), (end, mids[place] + 2), (end + 12, mids[place] + 2)], sw=1.5)
    pill = c.rect(end + 14, mids[place] - 10, 70, 24, fill=mix(OKABE_ITO["bluish_green"], 0.25),
                  stroke=OKABE_ITO["bluish_green"], sw=2, rx=12)
    c.text(end + 49, mids[place] + 7, "Running", size=13, bold=True, anchor="middle", inside=pill)
    note(end + 14, place, "pods bound")

    # under the path: one bracket per bucket, labels on two staggered lines
    y = bottom + 14
    c.arrow([(230, y), (WIDTH - 20, y)], stroke=MUTED, sw=1)
    c.text(WIDTH - 22, y - 5, "time", anchor="end", fill=MUTED)
    c.text(16, y + 22, "wait bucket", size=13, bold=True)
    c.text(16, y + 38, "(column wait_<bucket>_s", fill=MUTED)
    c.text(16, y + 52, "of Result.jobs)", fill=MUTED)
    for i, b in enumerate(BUCKETS):
        x0, x1 = span[b]
        c.bracket(x0 + 2, x1 - 2, y + 18)
        ly = y + 42 if i % 2 == 0 else y + 60
        xm = (x0 + x1) / 2
        if i % 2:
            c.line([(xm, y + 25), (xm, ly - 12)], stroke=RULE, sw=1)
        w = text_width(b, 12, mono=True) + 14
        c.rect(xm - w / 2, ly - 9, 10, 10, fill=BUCKET_COLOURS[b], stroke=INK, sw=1)
        c.text(xm - w / 2 + 14, ly, b, mono=True, cls="bucket")
    y += 76
    c.bracket(232, end - 2, y)
    c.text((230 + end) / 2, y + 22, "wait_s: the buckets add up to the whole wait (wait_unattributed_s stays 0)",
           anchor="middle")

    y += 48
    notes = [
        f"{placement}: the pods exist but do not all fit on the nodes there are, and no node is coming for them "
        "(this includes Karpenter's batching window, before it launches anything).",
        "node buckets: the job waits for a node a supplier launched for it (Karpenter nominated its pods to it, or "
        "its ProvisioningRequest booked it), named after the stage that node has not reached yet; the node "
        "ready last counts.",
        f"A stack has only its own layers: without Kueue there is no {quota} bucket, without an admission check "
        f"no {check}, without a node supplier no node buckets.",
    ]
    for s in notes:
        y = c.lines(16, y, wrap(s, WIDTH - 32, 12), fill=MUTED) + 4
    c.height = y + 6
    return c


# --- diagram 2: the scheduling framework and the gang plugins (lesson 02) -----------------------
COSCHEDULING = OKABE_ITO["blue"]
GANG_SCHEDULING = OKABE_ITO["bluish_green"]
HELD = OKABE_ITO["vermillion"]

#: The extension points one pod passes, in order, by phase: (name, what happens there, what
#: coscheduling does there, what GangScheduling does there). Empty: the plugin does not act there.
FRAMEWORK = (
    ("Scheduling queue: the pod waits to be tried", (
        ("PreEnqueue", "may the pod enter the active queue? (SchedulingGates)", "",
         "holds the pods out of the queue until the Workload and minCount pods of the group exist"),
        ("QueueSort", "which pod is tried next (PrioritySort)",
         "replaces PrioritySort: priority, then the group's creation time, so a group's pods come together", ""),
    )),
    ("Scheduling cycle: one pod at a time, a node is chosen for it", (
        ("PreFilter", "checks on the pod before any node (NodeResourcesFit, ...)",
         "refuses the pod while its group has fewer pods than minMember", ""),
        ("Filter", "the nodes that can hold it (NodeResourcesFit: free GPUs)", "", ""),
        ("PostFilter", "only if no node fits: DefaultPreemption",
         "rejects the group's waiting pods, unless at most 10\u00a0% of minMember is missing", ""),
        ("PreScore", "prepares state for the Score plugins", "", ""),
        ("Score", "ranks the nodes that fit (NodeResourcesFit)", "", ""),
        ("NormalizeScore", "each Score plugin scales its scores to 0..100", "", ""),
        ("Reserve", "the pod is assumed on the chosen node (Unreserve undoes it)",
         "Unreserve (on a Permit timeout, say): rejects the group's waiting pods",
         "counts the pod as assumed; Unreserve forgets it"),
        ("Permit", "approve, deny, or wait (with a timeout)",
         "waits until minMember pods are assumed or bound, at most scheduleTimeoutSeconds (default 60\u00a0s)",
         "waits until minCount pods are assumed or bound, at most 5\u00a0minutes (fixed)"),
    )),
    ("Binding cycle: may run alongside the next scheduling cycles", (
        ("WaitOnPermit", "not a plugin point: binding waits until every Permit plugin allows",
         "held", "held"),
        ("PreBind", "work before binding (VolumeBinding)", "", ""),
        ("Bind", "writes the pod's node (DefaultBinder)", "", ""),
        ("PostBind", "informational, after a successful bind", "", ""),
    )),
)
HELD_TEXT = ("held at Permit: the pod is assumed on its node, so its GPUs are reserved but idle until the whole "
             "gang is allowed, or the wait times out and frees them (gangkit counts them in held_idle_gpu_s)")


def scheduling_framework() -> Canvas:
    """Lesson 02's picture: the framework's extension points for one pod, and where the gang plugins act."""
    c = Canvas(
        "scheduling-framework",
        title="The kube-scheduler framework for one pod (Kubernetes 1.35), and where the gang plugins act",
        desc=(
            "A table in the order one pod passes the extension points. Scheduling queue: PreEnqueue "
            "(SchedulingGates; Kubernetes' GangScheduling plugin holds pods here until the Workload and "
            "minCount pods exist), QueueSort (coscheduling replaces PrioritySort so that a group's pods come "
            "together). Scheduling cycle: PreFilter (coscheduling refuses a pod whose group has fewer pods than "
            "minMember), Filter, PostFilter (only when no node fits; DefaultPreemption; coscheduling rejects the "
            "group's waiting pods unless at most 10 percent of minMember is missing), PreScore, Score, "
            "NormalizeScore, Reserve (GangScheduling counts the pod as assumed; coscheduling's Unreserve rejects "
            "the group's waiting pods), Permit (both gang plugins make the pod wait: coscheduling until minMember "
            "pods are assumed or bound, at most scheduleTimeoutSeconds, default 60 s; GangScheduling until "
            "minCount, at most 5 minutes). Binding cycle: WaitOnPermit, where a held pod's GPUs are reserved "
            "but idle, then PreBind, Bind, PostBind. Volcano is a separate scheduler with its own sessions "
            "and actions (enqueue, allocate, preempt, reclaim, backfill), not plugins in this framework."
        ),
    )
    c.text(12, 26, "One pod through the kube-scheduler framework (1.35), and where the gang plugins act",
           size=16, bold=True)
    c.text(12, 46, "The extension points in the order a pod meets them; a coloured cell says what that plugin "
                   "does there.", fill=MUTED)

    cols = [(24, 150), (160, 376), (386, 648), (658, 888)]  # point, what happens, coscheduling, GangScheduling
    y = 62
    heads = [("extension", "point"), ("what happens there", "(default plugin)"),
             ("coscheduling", "scheduler-plugins v0.35-devel"), ("GangScheduling", "Kubernetes 1.35, alpha, KEP-4671")]
    for i, ((x0, x1), (name, sub)) in enumerate(zip(cols, heads)):
        cell = Box(x0, y, x1, y + 36)
        c.text(x0 + 4, y + 12, name, size=13, bold=True, inside=cell)
        c.text(x0 + 4, y + 27, sub, size=13 if i == 0 else 12, bold=i == 0, fill=INK if i == 0 else MUTED, inside=cell)
        if i >= 2:
            c.rect(x0, y + 32, x1 - x0, 4, fill=(COSCHEDULING, GANG_SCHEDULING)[i - 2])
    y += 42

    leading, pad = 14, 6
    boxes: dict[str, Box] = {}
    held_rows: list[Box] = []
    for phase, rows in FRAMEWORK:
        band = c.rect(8, y, WIDTH - 16, 22, fill=LANE)
        c.text(cols[1][0] + 4, y + 16, phase, size=13, bold=True, inside=band)
        y += 26
        for name, what, cos, gang in rows:
            texts = [wrap(what, cols[1][1] - cols[1][0] - 8, 12)]
            held = cos == "held"
            if held:
                texts.append(wrap(HELD_TEXT, cols[3][1] - cols[2][0] - 12, 12))
            else:
                texts += [wrap(cos, cols[2][1] - cols[2][0] - 12, 12), wrap(gang, cols[3][1] - cols[3][0] - 12, 12)]
            h = max(30, max(len(t) for t in texts) * leading + 2 * pad - 2)
            point = Box(cols[0][0], y, cols[0][1], y + h)
            dashed = name in ("PostFilter", "WaitOnPermit")
            c.rect(point.x0, y, point.x1 - point.x0, h, fill="#FFFFFF", stroke=INK, sw=1.5, rx=4,
                   dash="5 3" if dashed else None)
            c.text((point.x0 + point.x1) / 2, y + h / 2 + 4.5, name, size=13, bold=True, anchor="middle",
                   inside=point, cls="point")
            boxes[name] = point
            ty = y + pad + 10
            c.lines(cols[1][0] + 4, ty, texts[0], leading=leading, fill=MUTED, inside=Box(cols[1][0], y, cols[1][1], y + h))
            if held:
                cell = c.rect(cols[2][0], y, cols[3][1] - cols[2][0], h, fill=mix(HELD, 0.14), stroke=HELD, sw=1.5, rx=4)
                c.lines(cols[2][0] + 6, ty, texts[1], leading=leading, inside=cell)
                held_rows.append(point)
            for (x0, x1), lines, colour in zip(cols[2:], texts[1:] if not held else [], (COSCHEDULING, GANG_SCHEDULING)):
                if lines == [""]:
                    continue
                cell = c.rect(x0, y, x1 - x0, h, fill=mix(colour, 0.14), stroke=colour, sw=1.5, rx=4)
                c.lines(x0 + 6, ty, lines, leading=leading, inside=cell)
            if name == "Permit":
                held_rows.append(point)
            y += h + 10
        y += 2

    # the spine: each point leads to the next; PostFilter runs only when Filter finds no node
    order = [name for _, rows in FRAMEWORK for name, *_ in rows]
    xm = (cols[0][0] + cols[0][1]) / 2
    for a, b in zip(order, order[1:]):
        dash = "4 3" if "PostFilter" in (a, b) else None
        c.arrow([(xm, boxes[a].y1), (xm, boxes[b].y0 - 1)], sw=1.5, dash=dash)
    f, s = boxes["Filter"], boxes["PreScore"]
    c.arrow([(f.x0, (f.y0 + f.y1) / 2), (f.x0 - 10, (f.y0 + f.y1) / 2), (f.x0 - 10, (s.y0 + s.y1) / 2),
             (s.x0 - 1, (s.y0 + s.y1) / 2)], sw=1.5)

    # held at Permit: from the end of the scheduling cycle into the binding cycle
    top, bottom = held_rows[0].y0 - 4, held_rows[-1].y1 + 4
    c.rect(4, top, WIDTH - 8, bottom - top, stroke=HELD, sw=2.5, rx=6, dash="8 4")

    # Volcano is another scheduler, not plugins here
    y += 4
    lines = wrap("It is a scheduler of its own (schedulerName: volcano). Every session (once a second by default) "
                 "it takes a snapshot and runs its actions in turn (enqueue, allocate, preempt, reclaim, backfill) "
                 "with plugins of its own (gang, proportion, priority, ...). allocate tries a whole gang and keeps "
                 "it only if minMember pods fit, so a waiting gang holds nothing between sessions.",
                 WIDTH - 48, 12)
    h = 30 + len(lines) * leading
    box = c.rect(8, y, WIDTH - 16, h, fill=mix(OKABE_ITO["yellow"], 0.18), stroke=mix(OKABE_ITO["yellow"], 0.6, "#000000"),
                 sw=1.5, rx=6)
    c.text(20, y + 20, "Volcano is not a set of plugins in this framework", size=13, bold=True, inside=box)
    c.lines(20, y + 37, lines, leading=leading, inside=box)
    y += h + 18
    for s in wrap("Kubernetes 1.36 reworks GangScheduling around a PodGroup scheduling cycle (not drawn). "
                  "Sources: the Kubernetes pages Scheduling Framework and Gang Scheduling (1.35), KEP-4671, "
                  "kubernetes-sigs/scheduler-plugins pkg/coscheduling (v0.35-devel, master); gangkit's models: "
                  "docs/reference/coscheduling.md, kube-gang.md, volcano.md.", WIDTH - 32, 12):
        c.text(16, y, s, fill=MUTED)
        y += leading
    c.height = y + 4
    return c


DIAGRAMS = {
    "stack_path.svg": stack_path,
    "scheduling_framework.svg": scheduling_framework,
}


def render() -> dict[str, str]:
    """Every diagram's file name and SVG text."""
    return {name: make().svg() for name, make in DIAGRAMS.items()}


def check(folder: Path = FIGURES) -> list[str]:
    """One problem per committed diagram that is missing or differs from what this program draws."""
    problems = []
    for name, svg in render().items():
        path = folder / name
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        if not path.exists():
            problems.append(f"{shown} is missing")
        elif path.read_text(encoding="utf-8") != svg:
            problems.append(f"{shown} differs from what tools/make_diagrams.py draws (edited by hand, or stale)")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a committed diagram differs")
    args = parser.parse_args(argv)
    if args.check:
        problems = check()
        for p in problems:
            print(p)
        if problems:
            print("run `python tools/make_diagrams.py` and commit course/figures/")
            return 1
        print(f"{len(DIAGRAMS)} diagram(s) up to date")
        return 0
    FIGURES.mkdir(parents=True, exist_ok=True)
    for name, svg in render().items():
        (FIGURES / name).write_text(svg, encoding="utf-8")
        print(f"wrote {(FIGURES / name).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
