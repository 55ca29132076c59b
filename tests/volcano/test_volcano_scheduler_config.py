"""Volcano's scheduler configuration (the ConfigMap's ``volcano-scheduler.conf``), read as Volcano v1.15.1 reads it.

Rows take the configurations Volcano ships (its chart's default and CI
files, the sla plugin's design page) and check what gangkit makes of them:
whether enqueue runs, the overcommit plugin and its factor, the sla plugin
and whether its tier comes before gang's (``session_plugins.go``: a vote in
gang's tier is overruled by gang's Reject).
"""

from __future__ import annotations

import pytest

import gangkit as gk
from gangkit.manifests import dump_manifests, load_manifests
from gangkit.model.errors import ScenarioError
from gangkit.model.jobs import Job, PodSet
from gangkit.model.nodes import nodes
from gangkit.model.scenario import Scenario
from gangkit.volcano.api import Queue, VolcanoSetup
from gangkit.volcano.plugins.sla import SlaPlugin

from schema_util import requires_schemas, validate_manifest

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"capacity": {"nvidia.com/gpu": "4"}, "allocatable": {"nvidia.com/gpu": "4"}}}

CHART_DEFAULT = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""
CHART_CI = """actions: "enqueue, allocate, backfill, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
  - name: sla
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""
SLA_PAGE = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: sla
    arguments:
      sla-waiting-time: 1h2m3s
"""
SLA_FIRST = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: sla
    arguments:
      sla-waiting-time: 30m
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: overcommit
    arguments:
      overcommit-factor: 1.5
  - name: proportion
"""


def config_map(text, name="volcano-scheduler-configmap", key="volcano-scheduler.conf") -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "volcano-system"},
            "data": {key: text}}


READ = [
    # (id, configuration, (enqueue, overcommit, factor, sla))
    ("the chart's default: enqueue on, overcommit 1.2, no sla", CHART_DEFAULT, (True, True, 1.2, None)),
    ("the chart's CI file: sla after gang in the first tier", CHART_CI, (True, True, 1.2, SlaPlugin())),
    ("the sla design page: its waiting time, after gang", SLA_PAGE, (True, False, 1.2, SlaPlugin(3723.0))),
    ("sla in a tier of its own before gang's, an overcommit factor", SLA_FIRST,
     (True, True, 1.5, SlaPlugin(1800.0, first_tier=True))),
    ("no enqueue action", CHART_DEFAULT.replace('"enqueue, allocate, backfill"', '"allocate, backfill"'),
     (False, True, 1.2, None)),
]


@pytest.mark.parametrize("text, expected", [c[1:] for c in READ], ids=[c[0] for c in READ])
def test_reading(text, expected):
    setup = load_manifests([NODE, config_map(text)]).volcano
    assert (setup.enqueue, setup.overcommit, setup.overcommit_factor, setup.sla) == expected


def test_other_config_maps_are_noted_not_read():
    sc = load_manifests([NODE, config_map("x: 1", name="app-settings", key="settings.yaml")])
    assert sc.volcano is None
    assert any("ConfigMap volcano-system/app-settings: not read" in w for w in sc.warnings)


def test_plugins_gangkit_does_not_model_are_noted():
    warnings = load_manifests([NODE, config_map(CHART_DEFAULT)]).warnings
    assert any("plugin binpack scores nodes" in w for w in warnings)
    assert not any("plugin drf" in w for w in warnings)  # drf's job order is modelled
    without_drf = load_manifests([NODE, config_map(CHART_DEFAULT.replace("  - name: drf\n", ""))]).warnings
    assert any("without the drf plugin" in w for w in without_drf)


BAD = [
    # (id, configuration, the words of the one error)
    ("an action Volcano does not register", CHART_DEFAULT.replace("backfill", "elect"), "failed to find Action 'elect'"),
    ("no actions", "tiers: []\n", "expected a comma-separated list"),
    ("an overcommit factor below 1", SLA_FIRST.replace("1.5", "0.5"), "expected a number >= 1"),
    ("an sla waiting time that does not parse", SLA_PAGE.replace("1h2m3s", "soon"), "expected a Go duration above zero"),
    ("not YAML", "actions: [unclosed\n", "expected YAML"),
    ("plugins without names", 'actions: "allocate"\ntiers:\n- plugins:\n  - arguments: {}\n', "each with a name"),
]


@pytest.mark.parametrize("text, words", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_a_bad_configuration_is_one_clear_error(text, words):
    with pytest.raises(ScenarioError) as info:
        load_manifests([NODE, config_map(text)])
    problems = info.value.problems
    assert len(problems) == 1 and problems[0].obj == "ConfigMap volcano-system/volcano-scheduler-configmap", problems
    assert words in problems[0].message


def test_two_volcano_configurations_are_refused():
    with pytest.raises(ScenarioError, match="expected one Volcano scheduler configuration"):
        load_manifests([NODE, config_map(CHART_DEFAULT), config_map(CHART_CI, name="second")])


def test_without_the_overcommit_plugin_enqueue_ignores_the_idle_room():
    """A team's queue is full with 'fill'; a Volcano Job of queue b asks for the whole cluster. The overcommit
    plugin refuses it (idle room 4 x 1.2 - 4 = 0.8 GPUs); without the plugin its PodGroup is let in and its
    pods wait for room."""
    jobs = [Job("fill", [PodSet("main", 1, 4)], 3600, volcano_queue="a"),
            Job("train", [PodSet("main", 4, 1)], 100, submit_time=60, controller="volcano", volcano_queue="b")]
    reasons = {}
    for overcommit in (True, False):
        sc = Scenario(nodes(1, gpus=4), jobs, volcano=VolcanoSetup([Queue("a"), Queue("b")], overcommit=overcommit))
        reasons[overcommit] = gk.simulate(sc, stack="gang", horizon=120).jobs.set_index("job").loc["train", "reason"]
    assert "ClusterOverused" in reasons[True] and "GangCannotFit" in reasons[False]


ROUND_TRIP = [
    VolcanoSetup(sla=SlaPlugin(1800.0, first_tier=True)),
    VolcanoSetup(sla=SlaPlugin()),
    VolcanoSetup(enqueue=False, overcommit_factor=1.5),
    VolcanoSetup(overcommit=False),
]


@pytest.mark.parametrize("setup", ROUND_TRIP, ids=["sla before gang", "sla after gang", "no enqueue, factor 1.5",
                                                    "no overcommit"])
def test_the_configuration_is_written_back(setup):
    sc = Scenario(nodes(1, gpus=4), [Job("j", [PodSet("main", 1, 1)], 10)], volcano=setup)
    again = load_manifests(dump_manifests(sc)).volcano
    assert (again.enqueue, again.overcommit, again.overcommit_factor, again.sla) == \
        (setup.enqueue, setup.overcommit, setup.overcommit_factor, setup.sla)


def test_the_default_setup_writes_no_configuration():
    sc = Scenario(nodes(1, gpus=4), [Job("j", [PodSet("main", 1, 1)], 10)], volcano=VolcanoSetup([Queue("a")]))
    assert "ConfigMap" not in dump_manifests(sc)


@requires_schemas
@pytest.mark.parametrize("setup", ROUND_TRIP[:3], ids=["sla before gang", "sla after gang", "no enqueue"])
def test_the_written_config_map_validates(setup):
    import yaml

    sc = Scenario(nodes(1, gpus=4), [Job("j", [PodSet("main", 1, 1)], 10)], volcano=setup)
    docs = [d for d in yaml.safe_load_all(dump_manifests(sc)) if d and d["kind"] == "ConfigMap"]
    assert len(docs) == 1 and validate_manifest(docs[0])
