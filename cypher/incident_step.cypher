// One checkpointed step of one of an incident's tasks, whole (`n` of task $task_id):
// `GET /api/v1/incidents/{id}/steps/{task_id}/{n}`, where a step the step list cut is read in
// full. Columns as `web_incident_steps`. No row when the incident has no such task or step.
MATCH (s:Step {task_id: $task_id})-[:OF]->(t:Task)-[:FOR]->(:Incident {id: $incident_id})
WHERE s.n = $n
RETURN t.id AS task_id, t.kind AS kind, t.status AS task_status, t.created_at AS created_at,
       s.n AS n, s.tool AS tool, s.args AS args, s.result AS result,
       size(s.args) AS args_chars, size(s.result) AS result_chars, s.started_at AS started_at,
       s.at AS at, s.epoch AS epoch
