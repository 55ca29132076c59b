"""One module per lesson: its scenarios, tables and explorer widgets."""
