"""nbgrader settings for turning solutions/NN_slug.ipynb into exercises/NN_slug.ipynb.

Used by tools/make_exercises.py (and usable by hand with `jupyter nbconvert --config`).
A region between `### BEGIN SOLUTION` and `### END SOLUTION` becomes a comment-only stub, so an
untouched exercise still runs to the end: each answer cell starts with `answer = None` above
the markers, and each check answers "not done yet" when it sees None. The stub is a Dict
option that the nbconvert command line does not set as expected, hence this file.
"""

c = get_config()  # noqa: F821 - provided by traitlets when this file is loaded

c.ClearSolutions.enforce_metadata = False
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.Exporter.preprocessors = [
    "nbgrader.preprocessors.ClearSolutions",
    "nbgrader.preprocessors.ClearOutput",
]
