// The incident's finding when a planner model made it, with how many alerts it saw and how many
// the incident holds now (fewer after a split): a re-investigation that sees no new alert
// reuses it instead of asking a model again.
MATCH (i:Incident {id: $incident_id})-[:HAS_FINDING]->(f:Finding {planner: 'model'})
OPTIONAL MATCH (i)-[:HAS_ALERT]->(a:Alert)
RETURN f.root_cause AS root_cause, f.candidates AS candidates, f.confidence AS confidence,
       f.summary AS summary, f.model AS model, f.second_opinion_json AS second_opinion_json,
       f.ruled_out_json AS ruled_out_json, f.alerts_seen AS alerts_seen,
       f.separated_by AS separated_by, f.evidence_json AS evidence_json, count(a) AS alerts_now
