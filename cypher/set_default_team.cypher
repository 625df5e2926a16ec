// Make $team the only default team (the root route, docs/architecture.md §4b) of this tenant graph.
MATCH (tm:Team)
SET tm.is_default = (tm.name = $team)
RETURN count(tm) AS teams
