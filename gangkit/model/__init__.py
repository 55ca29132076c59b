"""Plain data: nodes, jobs, scenarios, resources, quantities and errors (imports nothing else of gangkit)."""
