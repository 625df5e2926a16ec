// One page of an incident's checkpointed steps for `GET /api/v1/incidents/{id}/steps`: $limit
// steps after the first $offset, in the order of `web_incident_steps` (oldest task first, each
// in order), its columns too: args and results cut to their first $max_chars characters of
// stored JSON (the first step of an investigation stores every alert: megabytes for a storm),
// with their whole lengths (`args_chars`, `result_chars`).
MATCH (t:Task)-[:FOR]->(:Incident {id: $incident_id})
MATCH (s:Step)-[:OF]->(t)
WITH t, s
ORDER BY t.created_at, t.id, s.n
SKIP $offset LIMIT $limit
RETURN t.id AS task_id, t.kind AS kind, t.status AS task_status, t.created_at AS created_at,
       s.n AS n, s.tool AS tool,
       left(s.args, $max_chars) AS args, left(s.result, $max_chars) AS result,
       size(s.args) AS args_chars, size(s.result) AS result_chars, s.started_at AS started_at,
       s.at AS at, s.epoch AS epoch
