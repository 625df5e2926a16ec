// A person's stated preference, as understood (status 'proposed'), and a `readback` task so the
// responder asks them to approve it. Idempotent by fact id (one per Slack event).
MATCH (i:Incident {id: $incident_id})
MERGE (f:Fact {id: $id})
  ON CREATE SET f.kind = 'preference', f.status = 'proposed', f.person = $person,
    f.person_name = $person_name, f.failure_kind = $failure_kind, f.no_page = $no_page,
    f.ticket = $ticket, f.detail = $detail, f.text = $text, f.stated_at = timestamp(),
    f.incident_id = i.id
MERGE (f)-[:STATED_IN]->(i)
MERGE (t:Task {id: 'readback:' + $id})
  ON CREATE SET t += {kind: 'readback', incident_id: i.id, fact_id: $id,
// @include _fresh_task
}
MERGE (t)-[:FOR]->(i)
RETURN f.id AS id, f.status AS status
