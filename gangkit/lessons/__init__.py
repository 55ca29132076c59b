"""One module per lesson: ``lesson01`` ... ``lesson08`` hold each lesson's scenarios, tables and explorer widget.

What every explorer shares (the :class:`~gangkit.lessons.explorer.Explorer` box and its outputs) is in
:mod:`gangkit.lessons.explorer`.
"""
