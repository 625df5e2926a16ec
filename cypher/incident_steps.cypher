// The checkpointed steps of an incident's investigations (investigate and reinvestigate
// tasks), oldest task first, each in order: what the investigator did, for the ticket.
MATCH (t:Task)-[:FOR]->(:Incident {id: $incident_id})
WHERE t.kind IN ['investigate', 'reinvestigate']
MATCH (s:Step)-[:OF]->(t)
RETURN t.id AS task_id, t.kind AS kind, t.created_at AS created_at, s.n AS n, s.tool AS tool,
       s.args AS args, s.result AS result, s.at AS at
ORDER BY created_at, task_id, n
