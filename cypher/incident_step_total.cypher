// How many checkpointed steps an incident's tasks have (`total` of
// `GET /api/v1/incidents/{id}/steps`). No row when there is no such incident (grouped by its id:
// a bare count would answer 0 for one that does not exist).
MATCH (i:Incident {id: $incident_id})
OPTIONAL MATCH (s:Step)-[:OF]->(:Task)-[:FOR]->(i)
RETURN i.id AS incident_id, count(s) AS total
