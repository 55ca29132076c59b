"""The reader every family of manifests builds on: a customs officer who writes one report.

Picture a customs officer at a border. Every document that crosses (every
manifest) is checked field by field, but nobody is sent back at the first
mistake: each problem goes on the report, one line naming the document and
the field, the way the Kubernetes API server answers::

    Job default/train: spec.parallelism: expected a whole number >= 1, got 0

At the end the whole report is handed over at once (one
:class:`~gangkit.model.errors.ScenarioError`), so a learner fixes everything
in one pass. Fields the officer does not know are not refused but written
down, and listed together in one warning (:class:`GangkitInputWarning`): a
silently ignored ``tolerations`` would make the simulation disagree with the
cluster.

Every family of kinds (the core Kubernetes kinds, the node suppliers, the
gang schedulers, Kueue, Volcano) reads its objects with one :class:`Reader`
and the shared pieces here: the field schemas (:data:`META`,
:data:`POD_SPEC`, :data:`ANY`), gangkit's annotations, quantities and
durations, the parsed object (:class:`ManifestObject`) and YAML parsing.
This module knows no family.

The officer also refuses what no report could describe: a file that is not
UTF-8 (or UTF-16 with its byte order mark, which kubectl reads too: k8s.io/cli-runtime
``pkg/resource/visitor.go`` decodes files with ``unicode.BOMOverride`` over UTF-8, so a dump
Windows PowerShell 5 redirected into a file reads; UTF-16 without the mark is an error
that says so), more than :data:`MAX_INPUT_BYTES`,
nesting deeper than :data:`MAX_DEPTH`, aliases that expand a document
(a "billion laughs"), and a list or a mapping where a name must be
(:data:`STRING_FIELDS`). Each is one problem naming the file or the field,
raised before anything is built from the input.
"""

from __future__ import annotations

import codecs
import difflib
import reprlib
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.quantity import MAX_JOB_PODS, parse_cpu, parse_duration, parse_gpus, parse_memory, parse_quantity

__all__ = [
    "ALIAS_ALLOWANCE", "ANY", "CHECKPOINT_INTERVAL", "GPU", "JOB_ANNOTATIONS", "MAX_DEPTH", "MAX_INPUT_BYTES", "MAX_INT32", "MAX_JOB_PODS",
    "MAX_SCENARIO_PODS", "META",
    "POD_SPEC", "PROGRESS", "QUEUE_LABEL", "RUN_TIME", "STRING_FIELDS", "SUBMIT_TIME", "GangkitInputWarning",
    "ManifestObject", "MissingFileError", "Reader", "is_whole", "looks_like_path", "new_object", "parse_yaml", "read_text",
    "short", "spec_of",
]

GPU = "nvidia.com/gpu"
RUN_TIME = "gangkit/run-time"
SUBMIT_TIME = "gangkit/submit-time"
PROGRESS = "gangkit/progress"
CHECKPOINT_INTERVAL = "gangkit/checkpoint-interval"
JOB_ANNOTATIONS = (RUN_TIME, SUBMIT_TIME, PROGRESS, CHECKPOINT_INTERVAL)  # gangkit's annotations on a Job
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"  # Kueue's label naming the Job's LocalQueue


class GangkitInputWarning(UserWarning):
    """Something in the input was read with a default or not read at all (the run still works)."""


class MissingFileError(ScenarioError, FileNotFoundError):
    """A file that is not there: one problem naming it, and still the ``FileNotFoundError`` Python code expects."""


# --- which fields gangkit knows ------------------------------------------------
# A tree per kind: ``ANY`` accepts the whole subtree, a dict lists the known
# keys ("*" = any key), a one-element list describes each item of a list.
# Known fields are either read by gangkit or do not change where and when pods
# run (image, command, env...). Everything else is listed in one warning.

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


# --- YAML in -------------------------------------------------------------------
# What gangkit reads at most (docs/reference/scenario-yaml.md, "Limits"). Beyond these a file is
# refused with one problem naming it, at once, instead of a wait of minutes or a crash.

#: One input (a file, or a YAML string) holds at most this many bytes. Kubernetes takes a file one
#: object per request, each at most 3 MiB (MaxRequestBodyBytes, k8s.io/apiserver pkg/server/config.go);
#: gangkit reads a whole cluster at once, a few seconds a megabyte (8 MiB: about 50,000 Nodes).
MAX_INPUT_BYTES = 8 * 2**20
#: A document nests mappings and lists at most this deep. Kubernetes objects nest about 15 levels
#: (a pod template's container's resources); YAML parsers stop far deeper (libyaml at 1000 levels,
#: go-yaml, which kubectl uses, at 10000), deeper than Python's own recursion can follow.
MAX_DEPTH = 100
#: Aliases (``*name``) may repeat at most as many nodes as a document writes, plus this many: the
#: defence against a "billion laughs" document, whose few lines of anchors expand to a billion
#: strings (go-yaml refuses such a document with "excessive aliasing" by a ratio of the same kind).
ALIAS_ALLOWANCE = 10_000

#: The most pods all Jobs of one input may have together over a run (gangkit's limit: it simulates
#: each pod, 150,000 pods of one gang in about 6 s).
MAX_SCENARIO_PODS = 1_000_000

_MERGE = "tag:yaml.org,2002:merge"
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser, when PyYAML was built with it


class _Loader(_SafeLoader):
    """PyYAML's safe loader, whose scalars that do not fit their tag are YAML errors with a position.

    ``2025-13-45`` (a timestamp with month 13) or an integer of 5000 digits
    would otherwise end the load with a bare ``ValueError``.
    """

    def construct_object(self, node, deep=False):
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, OverflowError) as e:
            what = short(node.value) if isinstance(node, yaml.ScalarNode) else "the value"
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {what} as {node.tag.rsplit(':', 1)[-1]}: {e}", node.start_mark) from None


class _Shorter(reprlib.Repr):
    """``reprlib``'s short repr, which also survives integers too long for Python to write (4300 digits)."""

    def __init__(self, width: int):
        super().__init__()
        self.maxlevel, self.maxstring, self.maxother, self.maxlong = 3, width, width, width

    def repr_int(self, x: int, level: int) -> str:
        return f"<an integer of {x.bit_length()} bits>" if x.bit_length() > 4 * self.maxlong else super().repr_int(x, level)


def short(value: Any, width: int = 80) -> str:
    """``repr(value)``, cut to ``width`` characters: a message quotes what it got without copying a whole file."""
    text = _Shorter(width).repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def looks_like_path(text: str) -> bool:
    """Is this string a file name (``cluster.yaml``) rather than YAML text?"""
    if "\n" in text or ":" in text.split("/")[-1]:
        return False
    if text.endswith((".yaml", ".yml", ".json")):
        return True
    try:
        return len(text) < 4096 and Path(text).exists()  # a directory too: then the error says what it is
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        return False


def read_text(path: Path) -> str:
    """The text of a YAML file, decoded as YAML allows: UTF-8, or UTF-16 with a byte order mark.

    A byte order mark (BOM) starts the file, or nothing does (then UTF-8), as
    the YAML spec's "character encodings" section and PyYAML's reader decide.
    Anything else (a Latin-1 file, binary data), a missing or unreadable
    path, a directory, or more than :data:`MAX_INPUT_BYTES` is one problem
    naming the file.
    """
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_INPUT_BYTES + 1)
    except FileNotFoundError:
        raise MissingFileError([Problem(f"File {path}", "", "not found")]) from None
    except IsADirectoryError:
        raise ScenarioError([Problem(f"File {path}", "", "expected a YAML file, got a directory")]) from None
    except OSError as e:
        raise ScenarioError([Problem(f"File {path}", "", f"cannot be read: {e.strerror or e}")]) from None
    name = Path(path).name
    _check_size(len(data), name)
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as e:
            raise ScenarioError([Problem(name, f"byte {e.start}", "expected UTF-16 text after its byte order mark, "
                                         f"got bytes that are not ({e.reason})")]) from None
    start = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[start:].decode("utf-8")
    except UnicodeDecodeError as e:
        at = start + e.start
        line = data.count(b"\n", 0, at) + 1
        column = at - data.rfind(b"\n", 0, at)
        raise ScenarioError([Problem(name, f"line {line}, column {column}", (
            f"expected UTF-8 text (or UTF-16 with a byte order mark), got the byte 0x{data[at]:02x}, which is "
            "not UTF-8 there (a Latin-1 or binary file?); save the file as UTF-8"))]) from None


def _check_size(size: int, label: str) -> None:
    if size > MAX_INPUT_BYTES:
        raise ScenarioError([Problem(label, "", (
            f"expected at most {MAX_INPUT_BYTES // 2**20} MiB of manifests, got more (gangkit's limit for one input; "
            "a cluster that large is better described by a WorkloadGenerator or a trace)"))])


def parse_yaml(text: str, label: str, notes: list[str] | None = None) -> list:
    """Every document of a YAML stream, as PyYAML's safe loader reads it (with libyaml when available).

    A syntax error is one problem with its position. Each document is
    screened before it is built: nesting deeper than :data:`MAX_DEPTH`, an
    anchor that contains its own alias, and aliases that repeat more than
    the document writes (:data:`ALIAS_ALLOWANCE`) are refused. A key that
    appears twice in one mapping is a warning naming it, appended to
    ``notes`` (emitted as :class:`GangkitInputWarning` without ``notes``).
    """
    _check_size(len(text), label)
    found: list[str] = []
    loader = _Loader(text)
    docs = []
    try:
        while loader.check_node():
            node = loader.get_node()
            _screen(node, label, found)
            data = loader.construct_document(node)
            if data is not None:
                docs.append(data)
    except yaml.YAMLError as e:
        raise _yaml_problem(e, text, label) from None
    except RecursionError:  # PyYAML's pure-Python composer recurses once per level (libyaml stops at 1000)
        raise ScenarioError([Problem(label, "", f"expected at most {MAX_DEPTH} levels of nested mappings and lists, "
                                                "got more (gangkit's limit: Kubernetes objects nest about 15)")]) from None
    finally:
        loader.dispose()
    if notes is None:
        for message in found:
            warnings.warn(message, GangkitInputWarning, stacklevel=2)
    else:
        notes.extend(found)
    return docs


def _at(mark) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _screen(root, label: str, notes: list[str]) -> None:
    """Refuse a document too deep, holding itself, or expanding through aliases; note its duplicate keys.

    One pass over the document's nodes, each node once (an alias is the
    node of its anchor, met again): ``size`` counts the nodes a node
    expands to, aliases counted at every use, so a billion laughs costs no
    more to measure than the lines that write it.
    """
    size: dict[int, int] = {}  # id(collection node) -> the nodes it expands to (scalars count 1)
    written = 1
    opened = {id(root)}
    if isinstance(root, yaml.MappingNode):
        _duplicate_keys(root, label, notes)
    stack = [(root, iter(_children(root)))]
    while stack:
        node, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            opened.discard(id(node))
            size[id(node)] = 1 + sum(size.get(id(c), 1) for c in _children(node))
            continue
        key = id(child)
        if isinstance(child, yaml.ScalarNode):
            written += 1  # an aliased scalar counts as written: repeating it costs one node a use
            continue
        if key in size:
            continue
        if key in opened:
            raise ScenarioError([Problem(label, _at(child.start_mark), "invalid YAML: an alias inside its own "
                                         "anchor (the value would contain itself)")])
        if len(stack) >= MAX_DEPTH:
            raise ScenarioError([Problem(label, _at(child.start_mark), (
                f"expected at most {MAX_DEPTH} levels of nested mappings and lists, got more (gangkit's limit: "
                "Kubernetes objects nest about 15)"))])
        if isinstance(child, yaml.MappingNode):
            _duplicate_keys(child, label, notes)
        written += 1
        opened.add(key)
        stack.append((child, iter(_children(child))))
    total = size.get(id(root), 1)
    if total > 2 * written + ALIAS_ALLOWANCE:
        raise ScenarioError([Problem(label, _at(root.start_mark), (
            f"expected aliases to repeat at most as many nodes as the document writes ({written}, plus "
            f"{ALIAS_ALLOWANCE}), got a document of {written} nodes that expands to {_count(total)} (a \"billion "
            "laughs\" document?)"))])


def _children(node) -> list:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return node.value
    return []


def _duplicate_keys(node, label: str, notes: list[str]) -> None:
    """A key written twice in one mapping: PyYAML keeps the last value; kubectl's strict field validation refuses it."""
    seen = set()
    for k, _ in node.value:
        if isinstance(k, yaml.ScalarNode) and k.tag != _MERGE:
            if (k.tag, k.value) in seen:
                notes.append(f"{label}: {_at(k.start_mark)}: the key {short(k.value)} appears twice in one mapping; "
                             "gangkit keeps the last value (kubectl's default --validate=strict refuses a duplicate field)")
            seen.add((k.tag, k.value))


def _count(n: int) -> str:
    return f"{n:,}" if n < 10**15 else f"about 10^{len(str(n)) - 1}"


def _yaml_problem(e: yaml.YAMLError, text: str, label: str) -> ScenarioError:
    """One problem for a YAML error, with its position, worded as PyYAML words it.

    libyaml words some errors differently and places a few elsewhere (at the
    end of the stream rather than at an unclosed bracket); for those, the
    pure-Python parser reads the text again, which costs time only for a
    file that does not load.
    """
    deep = "maximum nesting" in str(e)  # libyaml's own depth limit: the pure-Python parser would only recurse into it
    if _SafeLoader is not yaml.SafeLoader and not isinstance(e, yaml.constructor.ConstructorError) and not deep:
        try:
            for _ in yaml.compose_all(text, Loader=yaml.SafeLoader):
                pass
        except yaml.YAMLError as python_error:
            e = python_error
        except RecursionError:  # nesting libyaml refused and Python cannot follow: libyaml's answer stands
            pass
    if isinstance(e, yaml.reader.ReaderError):
        line = text.count("\n", 0, e.position) + 1
        column = e.position - text.rfind("\n", 0, e.position)
        what = str(e).splitlines()[0]
        if e.character in ("\0", 0):  # kubectl too reads UTF-16 only after its BOM (cli-runtime's FileVisitor)
            what += (" (a NUL byte: UTF-16 without its byte order mark? UTF-16 is read only after one, as kubectl "
                     "reads it; save the file as UTF-8)")
        return ScenarioError([Problem(label, f"line {line}, column {column}", f"invalid YAML: {what}")])
    mark = getattr(e, "problem_mark", None)
    where = _at(mark) if mark else ""
    what = " ".join(str(x) for x in (getattr(e, "context", None), getattr(e, "problem", None)) if x)
    return ScenarioError([Problem(label, where, f"invalid YAML: {what or str(e).splitlines()[0]}")])


@dataclass
class ManifestObject:
    """One manifest with where it came from and how messages name it."""

    doc: dict
    kind: str
    where: str  # "document 3" or "document 2, items[0]"
    name: str | None = None
    namespace: str | None = None
    role: str = ""  # what the reader groups it under (gangkit.manifests.kinds); the kind when empty
    namespaced: bool = False  # its name is unique per namespace (else per cluster)

    @property
    def label(self) -> str:
        if not self.name:
            return f"{self.kind} ({self.where})"
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


def new_object(doc: Mapping, where: str, kind: str | None = None) -> ManifestObject:
    """A document as a :class:`ManifestObject`; a name or namespace that is not a string is left out of its label."""
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
    name, namespace = meta.get("name"), meta.get("namespace")
    return ManifestObject(dict(doc), str(doc.get("kind")) if kind is None else kind, where,
                          name if isinstance(name, str) else None, namespace if isinstance(namespace, str) else None)


@dataclass
class Reader:
    """Reads manifests, collecting problems, unknown fields and notes for one report."""

    label: str
    problems: list[Problem] = field(default_factory=list)
    base: Path | None = None  # the YAML file's folder: relative paths inside the file start here
    unknown: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    # small typed getters: each records a problem and returns a harmless value

    def error(self, obj: str, fieldname: str, message: str) -> None:
        self.problems.append(Problem(obj, fieldname, _capped(message)))

    def attempt(self, parse: Callable[..., Any], value: Any, obj: str, fieldname: str) -> Any:
        try:
            return parse(value, obj=obj, field=fieldname)
        except ScenarioError as e:
            self.problems.extend(Problem(p.obj, p.field, _capped(p.message)) for p in e.problems)
            return None

    def duration(self, value: Any, obj: str, fieldname: str) -> float | None:
        """Seconds: a number or a Go duration (``90s``, ``1h30m``); None after recording a problem."""
        return self.attempt(parse_duration, value, obj, fieldname)

    def gpus(self, value: Any, obj: str, fieldname: str) -> int | None:
        return self.attempt(parse_gpus, value, obj, fieldname)

    def cpu(self, value: Any, obj: str, fieldname: str) -> float | None:
        return self.attempt(parse_cpu, value, obj, fieldname)

    def memory(self, value: Any, obj: str, fieldname: str) -> int | None:
        return self.attempt(parse_memory, value, obj, fieldname)

    def quantity(self, value: Any, obj: str, fieldname: str) -> Any:
        """The exact value of a Kubernetes quantity (a Fraction), or None."""
        return self.attempt(parse_quantity, value, obj, fieldname)

    def mapping(self, value: Any, obj: str, fieldname: str) -> dict:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.error(obj, fieldname, f"expected a mapping, got {type(value).__name__} {value!r}")
            return {}
        return dict(value)

    def named_items(self, spec: dict, key: str, obj: str, what: str) -> list[tuple[str, dict, str]] | None:
        """The entries of ``spec[key]``, a list whose entries each need a name: ``(path, entry, name)``.

        None (with an error) when the list is missing or empty; an entry
        without a name gets its own error and is left out.
        """
        raw = spec.get(key)
        if not isinstance(raw, list) or not raw:
            self.error(obj, f"spec.{key}", f"expected a list of at least one {what}, got {raw!r}")
            return None
        out = []
        for i, item in enumerate(raw):
            where = f"spec.{key}[{i}]"
            item = self.mapping(item, obj, where)
            name = item.get("name")
            if not isinstance(name, str) or not name:
                self.error(obj, f"{where}.name", f"expected a non-empty name, got {name!r}")
                continue
            out.append((where, item, name))
        return out

    def strings(self, value: Any, obj: str, fieldname: str) -> dict[str, str]:
        """A map of string to string (labels, annotations, nodeSelector): YAML ``true`` or ``8`` must be quoted."""
        out = {}
        for k, v in self.mapping(value, obj, fieldname).items():
            if isinstance(v, str):
                out[str(k)] = v
            else:
                self.error(obj, f"{fieldname}.{k}", f"expected a string, got {v!r} (quote it in YAML: \"{v}\")")
        return out

    def spec_count(self, o: ManifestObject, key: str, minimum: int) -> None:
        """Check ``spec.<key>`` of an object as its CRD does (an int32 >= ``minimum``), whether a Job uses it or not.

        The API server refuses such an object when it is created, before any
        Job names it (a PodGroup's ``minMember``); a non-mapping ``spec`` is
        refused here too. Readers that use the object later read it with
        :func:`spec_of` and :func:`is_whole`, quietly: it is reported once.
        """
        spec = self.mapping(o.doc.get("spec"), o.label, "spec")
        if spec.get(key) is not None:
            self.whole(spec[key], o.label, f"spec.{key}", minimum)

    def whole(self, value: Any, obj: str, fieldname: str, minimum: int, maximum: int = MAX_INT32) -> int | None:
        """A whole number from ``minimum`` to ``maximum``: by default an int32, as the API's counts are."""
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.error(obj, fieldname, f"expected a whole number >= {minimum}, got {short(value)}")
            return None
        if value > maximum:
            what = " (an int32 in the Kubernetes API)" if maximum == MAX_INT32 else ""
            self.error(obj, fieldname, f"expected a whole number <= {maximum}{what}, got {short(value)}")
            return None
        return value

    # one object

    def check_object(self, doc: Mapping, where: str, known: Any, annotations: tuple = ()) -> ManifestObject | None:
        """One object's metadata checked and its unknown fields noted; None after recording a problem.

        ``known`` is its field tree; ``annotations`` are the ``gangkit/*``
        annotations its ``metadata`` may carry (any other is an unknown field).
        """
        o = new_object(doc, where)
        meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
        if not isinstance(doc.get("metadata"), Mapping):
            self.error(o.label, "metadata", "expected a mapping with at least a name")
            return None
        if not isinstance(meta.get("name"), str) or not o.name:
            self.error(o.label, "metadata.name", f"expected a non-empty name, got {short(meta.get('name'))}")
            return None
        if meta.get("namespace") is not None and (not isinstance(o.namespace, str) or not o.namespace):
            self.error(o.label, "metadata.namespace", f"expected a non-empty string, got {short(meta.get('namespace'))}")
            return None
        if not self.find_unknown(o.doc, known, o.label, ""):
            return None
        template = _dig(doc, "spec", "template", "metadata")
        for where_ann, ann in (("metadata", meta), ("spec.template.metadata", template)):
            found = ann.get("annotations") if isinstance(ann, Mapping) else None
            for key in found if isinstance(found, Mapping) else ():
                if str(key).startswith("gangkit/") and (key not in annotations or where_ann != "metadata"):
                    self.unknown.append(f"{o.label}: {where_ann}.annotations.{key}")
        return o

    def find_unknown(self, node: Any, known: Any, obj: str, path: str) -> bool:
        """Note every field of ``node`` that the tree ``known`` does not list (with a close match, if any).

        Also the type rules every kind shares: a known field named in
        :data:`STRING_FIELDS` holds a string (or null), a key where any key
        is known (``"*"``: resource names) is a string, and each item of a
        list of objects (containers, tasks, pod sets...) is a mapping: the
        API server decodes ``containers: [null]`` into a container without
        a name and refuses it (``containers[0].name: Required value``).
        Returns False after recording a problem of that kind: the object is
        not read further.
        """
        if known is ANY:
            return True
        if isinstance(known, list):
            ok = True
            for i, item in enumerate(node if isinstance(node, list) else []):
                if isinstance(known[0], dict) and not isinstance(item, Mapping):
                    self.error(obj, f"{path}[{i}]", _not_an_item(path, item))
                    ok = False
                    continue
                ok = self.find_unknown(item, known[0], obj, f"{path}[{i}]") and ok
            return ok
        ok = True
        for key, value in node.items() if isinstance(node, Mapping) else ():
            sub = known.get(key, known.get("*"))
            here = f"{path}.{key}" if path else str(key)
            if sub is not None and key not in known and not isinstance(key, str):
                self.error(obj, here, f"expected a name (a string) as the key, got {type(key).__name__} {short(key)} "
                                      "(quote it in YAML)")
                ok = False
            elif sub is not None and key in STRING_FIELDS and value is not None and not isinstance(value, str):
                self.error(obj, here, f"expected a string, got {type(value).__name__} {short(value)}")
                ok = False
            elif sub is None:
                close = difflib.get_close_matches(str(key), [str(k) for k in known], n=1, cutoff=0.8)
                self.unknown.append(f"{obj}: {here}" + (f" (did you mean {close[0]}?)" if close else ""))
            else:
                ok = self.find_unknown(value, sub, obj, here) and ok
        return ok

    # what a pod asks for (a batch/v1 Job's pod template, a Volcano Job's task)

    def pod_request(self, pod: dict, obj: str) -> tuple[int, float, int] | None:
        """One pod's (GPUs, cores, bytes): the sum over its containers.

        Models the API server's rules for requests: a limit without a request
        sets the request; ``nvidia.com/gpu`` is an extended resource, so it
        needs a limit, a whole number, and a request (if given) equal to the limit.
        ``initContainers`` are not read (the warning lists them), but an item
        that is not a container is refused, as the API server refuses it.
        """
        containers = pod.get("containers")
        if not isinstance(containers, list) or not containers:
            self.error(obj, "spec.template.spec.containers", "expected a list of at least one container")
            return None
        gpus, cpu, memory, ok = 0, 0.0, 0, True
        init = pod.get("initContainers")  # not read (listed as unknown), but the API server refuses a bad one
        if init is not None and not isinstance(init, list):
            self.error(obj, "spec.template.spec.initContainers", f"expected a list of containers, got {short(init)}")
            ok = False
        for i, c in enumerate(init if isinstance(init, list) else []):
            if not isinstance(c, Mapping):
                self.error(obj, f"spec.template.spec.initContainers[{i}]", _not_an_item("initContainers", c))
                ok = False
        for i, c in enumerate(containers):
            base = f"spec.template.spec.containers[{i}]"
            c = self.mapping(c, obj, base)
            res = self.mapping(c.get("resources"), obj, f"{base}.resources")
            limits = self.mapping(res.get("limits"), obj, f"{base}.resources.limits")
            requests = self.mapping(res.get("requests"), obj, f"{base}.resources.requests")
            lim_field, req_field = f"{base}.resources.limits.", f"{base}.resources.requests."
            lim = self.gpus(limits[GPU], obj, lim_field + GPU) if GPU in limits else None
            req = self.gpus(requests[GPU], obj, req_field + GPU) if GPU in requests else None
            if GPU in requests and GPU not in limits:
                self.error(obj, lim_field + GPU, "Limit must be set for non overcommitable resources "
                           "(write the GPU count under limits; the request is copied from it)")
            elif req is not None and lim is not None and req != lim:
                self.error(obj, req_field + GPU, f"must be equal to {GPU} limit of {lim}, got {req}")
            gpus += lim or 0
            ok = ok and (GPU not in limits or lim is not None)
            for name, parse in (("cpu", self.cpu), ("memory", self.memory)):
                value = None
                if name in requests:
                    value = parse(requests[name], obj, req_field + name)
                    ok = ok and value is not None
                    top = parse(limits[name], obj, lim_field + name) if name in limits else None
                    if value is not None and top is not None and value > top:
                        self.error(obj, req_field + name, f"must be less than or equal to {name} limit of {limits[name]}")
                elif name in limits:
                    value = parse(limits[name], obj, lim_field + name)
                    ok = ok and value is not None
                if value is not None and name == "cpu":
                    cpu += value
                elif value is not None:
                    memory += value
        return (gpus, cpu, memory) if ok else None

    # the report

    def report(self) -> list[str]:
        """The warnings: first every unknown field, in one message listing their paths, then the notes."""
        notes = []
        if self.unknown:
            notes.append(
                f"gangkit does not read these {len(self.unknown)} field(s) (typos, or features it does not model):\n"
                + "\n".join(f"  {u}" for u in self.unknown)
            )
        return notes + self.notes

    def raise_problems(self) -> None:
        """Hand the report over: a ScenarioError with every problem, if there is one."""
        if self.problems:
            raise ScenarioError(self.problems)


#: What one item of a list of objects is, by the list's field name (for the message about an item that is not one).
_ITEM_NAMES = {
    "containers": "a container", "initContainers": "a container", "tasks": "a task", "podSets": "a pod set",
    "podGroups": "a pod group", "requirements": "a requirement", "budgets": "a budget",
    "instanceTypes": "an instance type", "nodeGroups": "a node group", "resourceGroups": "a resource group",
    "flavors": "a flavor", "resources": "a resource", "admissionChecks": "an admission check",
    "podSetAssignments": "a pod set assignment", "classes": "a job class",
}


def _not_an_item(path: str, item: Any) -> str:
    """``expected a mapping (a container), got null``: the message for a list item that is no object."""
    what = _ITEM_NAMES.get(path.rsplit(".", 1)[-1].split("[", 1)[0], "an object")
    got = "null" if item is None else f"{type(item).__name__} {short(item)}"
    return f"expected a mapping ({what}), got {got}"


def spec_of(o: ManifestObject) -> dict:
    """An object's ``spec`` (empty when it is not a mapping: :meth:`Reader.spec_count` reported that)."""
    spec = o.doc.get("spec")
    return dict(spec) if isinstance(spec, Mapping) else {}


def is_whole(value: Any, minimum: int, maximum: int = MAX_INT32) -> bool:
    """Is ``value`` a whole number from ``minimum`` to ``maximum`` (what :meth:`Reader.whole` accepts)?"""
    return isinstance(value, int) and not isinstance(value, bool) and minimum <= value <= maximum


def _capped(message: str, width: int = 2000) -> str:
    """A message of at most ``width`` characters: one line of the report, even when it quotes a huge value."""
    return message if len(message) <= width else message[: width - 3] + "..."


def _dig(doc: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(doc, Mapping):
            return None
        doc = doc.get(k)
    return doc
