// The changes (deploys, merged PRs) the incident's finding cites as evidence.
MATCH (:Incident {id: $incident_id})-[:HAS_FINDING]->(:Finding)-[:SUPPORTED_BY]->(ch:Change)
MATCH (ch)-[:MODIFIES]->(c:Component)
RETURN ch.kind AS kind, ch.ref AS ref, ch.at AS at, c.name AS component
ORDER BY at DESC
