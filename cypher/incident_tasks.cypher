// The agents' tasks of an incident, oldest first: kind, status, claims (epoch), attempts, whether
// the last claim took over an expired lease, the last error, the outcome of a finished task
// (e.g. why an escalation stopped) and, for a paused one, when it may be claimed again (ms).
MATCH (t:Task)-[:FOR]->(i:Incident {id: $incident_id})
RETURN t.id AS id, t.kind AS kind, t.status AS status, t.epoch AS epoch, t.attempts AS attempts,
       t.taken_over AS taken_over, t.last_error AS last_error, t.created_at AS created_at,
       t.outcome AS outcome, t.resume_at AS resume_at
ORDER BY created_at, id
