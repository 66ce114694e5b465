"""The read use case: resolve a query and route it to a tier, with its steps; the live resolver of a
long-running process."""
