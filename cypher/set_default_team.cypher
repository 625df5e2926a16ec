// Make $team the only default team (the root route, docs/architecture.md, evidence) of this tenant graph.
MATCH (tm:Team)
SET tm.is_default = (tm.name = $team)
RETURN count(tm) AS teams
