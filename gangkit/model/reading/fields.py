"""Which fields gangkit knows: the field trees every kind's reader checks an object against.

A tree per kind: ``ANY`` accepts the whole subtree, a dict lists the known
keys ("*" = any key), a one-element list describes each item of a list.
Known fields are either read by gangkit or do not change where and when pods
run (image, command, env...); :meth:`gangkit.model.reading.Reader.find_unknown`
lists everything else in one warning. Here are the pieces every family shares:
object metadata (:data:`META`), a pod's spec (:data:`POD_SPEC`), the fields
that hold a name (:data:`STRING_FIELDS`), the int32 bound of the API's counts,
and the names of gangkit's own annotations and the labels it reads.
"""

from __future__ import annotations

__all__ = [
    "ANY", "CHECKPOINT_INTERVAL", "GPU", "JOB_ANNOTATIONS", "MAX_INT32", "META", "POD_SPEC", "PROGRESS", "QUEUE_LABEL",
    "RUN_TIME", "STRING_FIELDS", "SUBMIT_TIME",
]

GPU = "nvidia.com/gpu"
RUN_TIME = "gangkit/run-time"
SUBMIT_TIME = "gangkit/submit-time"
PROGRESS = "gangkit/progress"
CHECKPOINT_INTERVAL = "gangkit/checkpoint-interval"
JOB_ANNOTATIONS = (RUN_TIME, SUBMIT_TIME, PROGRESS, CHECKPOINT_INTERVAL)  # gangkit's annotations on a Job
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"  # Kueue's label naming the Job's LocalQueue

ANY = True
_NAMES = dict.fromkeys
MAX_INT32 = 2**31 - 1  # the largest count the API's int32 fields (parallelism, replicas, minMember, ...) hold
#: Fields that hold a name (or a reference to one) wherever a kind knows them. Kubernetes decodes
#: them into Go strings, so a list, a mapping or a number there is refused at decoding ("cannot
#: unmarshal array into Go struct field ... of type string"); :meth:`Reader.find_unknown` refuses
#: them too, before any reader looks the name up.
STRING_FIELDS = frozenset([
    "apiVersion", "kind", "name", "namespace", "apiGroup", "group", "priorityClassName", "schedulerName",
    "queue", "queueName", "clusterQueue", "cohort", "cohortName", "parentName", "podGroup",
    "provisioningClassName", "controllerName", "instanceType", "expander", "distribution", "process", "progress",
])
META = _NAMES(
    ["name", "namespace", "labels", "annotations", "uid", "generateName", "creationTimestamp",
     "resourceVersion", "generation", "managedFields", "ownerReferences", "finalizers", "selfLink"],
    ANY,
)
_RESOURCE_NAMES = _NAMES(["cpu", "memory", GPU, "ephemeral-storage"], ANY)
_CONTAINER = {
    **_NAMES(
        ["name", "image", "imagePullPolicy", "command", "args", "env", "envFrom", "workingDir", "ports",
         "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle",
         "securityContext", "terminationMessagePath", "terminationMessagePolicy", "stdin", "stdinOnce",
         "tty", "resizePolicy"],
        ANY,
    ),
    "resources": {"limits": _RESOURCE_NAMES, "requests": _RESOURCE_NAMES},
}
POD_SPEC = {
    **_NAMES(
        ["nodeSelector", "priorityClassName", "restartPolicy", "schedulerName", "serviceAccount",
         "serviceAccountName", "automountServiceAccountToken", "volumes", "terminationGracePeriodSeconds",
         "imagePullSecrets", "securityContext", "hostname", "subdomain", "dnsPolicy", "dnsConfig",
         "enableServiceLinks", "hostAliases", "setHostnameAsFQDN", "shareProcessNamespace", "hostIPC",
         "hostPID", "hostNetwork"],
        ANY,
    ),
    "containers": [_CONTAINER],
}
