"""Reading manifests: the lowest tier's reader every family of kinds builds on (it imports only the model).

Three desks, one concept each:

- :mod:`~gangkit.model.reading.yaml_text`: the input as a whole (decoding, size, nesting and alias
  limits, YAML parsing with positions);
- :mod:`~gangkit.model.reading.fields`: which fields gangkit knows (the field trees :data:`META`,
  :data:`POD_SPEC`, :data:`ANY`; gangkit's annotations);
- :mod:`~gangkit.model.reading.reader`: the customs officer (:class:`Reader`) who checks each object
  field by field and hands over one report, and the parsed object (:class:`ManifestObject`).

Every layer package reads its own kinds with these (``gangkit.volcano.manifests``,
``gangkit.kueue.manifests``...), so a layer's reader sits in the layer's tier; ``gangkit.manifests``
gathers the families into one loader.
"""

from gangkit.model.quantity import MAX_JOB_PODS
from gangkit.model.reading.fields import (
    ANY,
    CHECKPOINT_INTERVAL,
    GPU,
    JOB_ANNOTATIONS,
    MAX_INT32,
    META,
    POD_SPEC,
    PROGRESS,
    QUEUE_LABEL,
    RUN_TIME,
    STRING_FIELDS,
    SUBMIT_TIME,
)
from gangkit.model.reading.reader import ManifestObject, Reader, is_whole, new_object, pod_resources, spec_of
from gangkit.model.reading.yaml_text import (
    ALIAS_ALLOWANCE,
    MAX_DEPTH,
    MAX_INPUT_BYTES,
    MAX_SCENARIO_PODS,
    GangkitInputWarning,
    MissingFileError,
    looks_like_path,
    parse_yaml,
    read_text,
    short,
)

__all__ = [
    "ALIAS_ALLOWANCE", "ANY", "CHECKPOINT_INTERVAL", "GPU", "JOB_ANNOTATIONS", "MAX_DEPTH", "MAX_INPUT_BYTES", "MAX_INT32",
    "MAX_JOB_PODS", "MAX_SCENARIO_PODS", "META", "POD_SPEC", "PROGRESS", "QUEUE_LABEL", "RUN_TIME", "STRING_FIELDS",
    "SUBMIT_TIME", "GangkitInputWarning", "ManifestObject", "MissingFileError", "Reader", "is_whole", "looks_like_path",
    "new_object", "parse_yaml", "pod_resources", "read_text", "short", "spec_of",
]
