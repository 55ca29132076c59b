"""One module per lesson: ``lesson01`` ... ``lesson08`` hold each lesson's scenarios, tables and explorer widget.

A lesson module that grew past one concept keeps its public names and re-exports the rest from its
``lessonNN_<concept>`` modules (``lesson07_migration``; ``lesson08_workload``, ``lesson08_design``), so a
notebook always imports from ``gangkit.lessons.lessonNN``.

What every explorer shares (the :class:`~gangkit.lessons.explorer.Explorer` box and its outputs) is in
:mod:`gangkit.lessons.explorer`.
"""
