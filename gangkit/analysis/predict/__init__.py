"""Before you submit: will my job start, when, and why not (``gangkit predict``).

A live cluster's dump (``kubectl get ... -o yaml``, read as ``gangkit run DUMP.yaml`` reads it:
:mod:`gangkit.manifests.snapshot`) says where every pod is, but not how long the running ones will still
run. :func:`predict` submits new workloads at the snapshot time and runs the dump forward many times
(*samples*), each time with other remaining run times drawn for the pods that run, and sums up, per new
workload, whether and when it starts and why it waits::

    from gangkit.analysis.predict import predict
    pred = predict("cluster.yaml", ["job.yaml"], stack="kueue+gang", samples=100, seed=0)
    pred.table()          # one row per new workload
    print(pred)           # one paragraph per new workload
    pred.to_json()        # the object ``gangkit predict --json`` prints

The package, one concept a module (docs/reference/predict.md is the user's side):

- :mod:`~gangkit.analysis.predict.residual`: the run time of a job that has already run ``a`` seconds,
  drawn given that it is longer than ``a`` (residual life), from the shipped Philly quantiles or one's own;
  a job's own ``gangkit/run-time`` annotation wins, and Deployments' pods serve until the horizon;
- :mod:`~gangkit.analysis.predict.snapshot`: what the snapshot says before any sampling: the diagnosis,
  "never" (reported at once, without sampling), Kueue's queue position;
- :mod:`~gangkit.analysis.predict.filters`: for a pod no node takes now, kube-scheduler's Filter
  verdict per node group, in kube-scheduler's words;
- :mod:`~gangkit.analysis.predict.sampling`: the samples, independent runs spread over processes (or a
  Dask client), deterministic for a seed whatever the number of workers;
- :mod:`~gangkit.analysis.predict.prediction`: the answer as a value (:class:`Prediction`,
  :class:`WorkloadPrediction`: ``will_start``, ``start_s`` p10/p50/p90, ``waits_in``, ``reason``,
  ``queue_position``, ``nodes``) and its paragraph, table and JSON forms;
- :mod:`~gangkit.analysis.predict.inputs`: what is read from the files beyond the scenario;
- :mod:`~gangkit.analysis.predict.steps`: :func:`predict` itself, as named steps.

Nothing but run times is sampled: every sample is the same simulation of the same dump and stack. So a
prediction is a simulation of the dump, not a promise: no other job arrives, no node fails, no quota changes.
"""

from gangkit.analysis.predict.filters import FILTER_ORDER, node_filters, tolerates
from gangkit.analysis.predict.prediction import Prediction, WorkloadPrediction
from gangkit.analysis.predict.residual import ResidualLife
from gangkit.analysis.predict.sampling import run_sample
from gangkit.analysis.predict.snapshot import NEVER_CODES
from gangkit.analysis.predict.steps import predict

__all__ = ["FILTER_ORDER", "NEVER_CODES", "Prediction", "ResidualLife", "WorkloadPrediction", "node_filters", "predict",
           "run_sample", "tolerates"]
