"""``gangkit check``: the inconsistencies between the layers of a stack's manifests, found before anything runs.

- :mod:`.findings`: a :class:`Finding`, and the catalogue of every code with the real rule behind it;
- :mod:`.inventory`: the files read with gangkit's reader, every object beside gangkit's reading of it;
- :mod:`.supply` and :mod:`.demand`: what the nodes can ever hold, what a job needs at once;
- the rules, one module per pair of layers: :mod:`.references` (names that must resolve),
  :mod:`.schedulers`, :mod:`.gangs`, :mod:`.quota` (Kueue), :mod:`.capability` (Volcano),
  :mod:`.capacity` and :mod:`.flavors` (nodes), :mod:`.timeouts`; :mod:`.simulation` (``--simulate``);
- :mod:`.check`: :func:`check_manifests` and :func:`check`; :mod:`.report`: text and JSON.
"""

from gangkit.consistency.check import check, check_manifests
from gangkit.consistency.findings import CATALOGUE, ERROR, WARNING, Finding, Rule
from gangkit.consistency.report import Report, format_json, format_text

__all__ = ["CATALOGUE", "ERROR", "WARNING", "Finding", "Report", "Rule", "check", "check_manifests", "format_json",
           "format_text"]
