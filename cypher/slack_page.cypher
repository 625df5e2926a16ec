// The incident whose Slack page has this reference (`slack:<channel id>:<ts>`): a thread
// reply's thread_ts, or a button's message ts, leads back to the incident.
MATCH (a:Action {external_ref: $ref})-[:FOR]->(i:Incident)
RETURN DISTINCT i.id AS incident_id, i.root_cause AS root_cause
LIMIT 1
