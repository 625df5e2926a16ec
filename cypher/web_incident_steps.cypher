// Every checkpointed step of every task of an incident (investigator, responder, learner), oldest
// task first and each in order, with the claim that wrote it: the page's timeline and
// `GET /api/v1/incidents/{id}/steps`. Args and results are the stored JSON strings.
MATCH (t:Task)-[:FOR]->(:Incident {id: $incident_id})
MATCH (s:Step)-[:OF]->(t)
RETURN t.id AS task_id, t.kind AS kind, t.status AS task_status, t.created_at AS created_at,
       s.n AS n, s.tool AS tool, s.args AS args, s.result AS result, s.started_at AS started_at,
       s.at AS at, s.epoch AS epoch
ORDER BY created_at, task_id, n
