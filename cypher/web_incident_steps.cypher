// Every checkpointed step of every task of an incident (investigator, responder, learner), oldest
// task first and each in order, with the claim that wrote it: the page's timeline and
// `GET /api/v1/incidents/{id}/steps`. Args and results are the stored JSON strings, cut to
// their first $max_chars characters (null: whole; a step that read 20,000 alerts stored
// megabytes), with their whole lengths (`args_chars`, `result_chars`).
MATCH (t:Task)-[:FOR]->(:Incident {id: $incident_id})
MATCH (s:Step)-[:OF]->(t)
RETURN t.id AS task_id, t.kind AS kind, t.status AS task_status, t.created_at AS created_at,
       s.n AS n, s.tool AS tool,
       left(s.args, coalesce($max_chars, 2147483647)) AS args,
       left(s.result, coalesce($max_chars, 2147483647)) AS result,
       size(s.args) AS args_chars, size(s.result) AS result_chars, s.started_at AS started_at,
       s.at AS at, s.epoch AS epoch
ORDER BY created_at, task_id, n
