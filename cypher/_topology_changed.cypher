// A fragment, not a query: the graph's topology changed (a component, its aliases, or a
// dependency edge written). One `(:Topology)` node holds a new random version, so that a
// process remembering the walks of the version it read (agents/triage/link_cache.py) reads
// them again: a new version, never a counter, so a graph dropped and imported again never
// repeats one. Writes to one graph are serialised, so the change and the version are atomic.
// Needs the query to have reduced its rows to one first (it runs once per row).
MERGE (topology:Topology)
SET topology.version = randomUUID()
