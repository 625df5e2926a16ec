// A fragment, not a query: inside a FOREACH over an incident `i` that was open and is resolved
// now (`resolve_incident`, `heartbeat_seen`), the responder's `notify_state:resolve:<id>` task
// that sends the one resolve notice, closes the ticket and edits the page
// (agents/respond/responder.py, `_state`). A MERGE on its fixed id: made once per incident.
  MERGE (t:Task {id: 'notify_state:resolve:' + i.id})
    ON CREATE SET t += {kind: 'notify_state', incident_id: i.id,
// @include _fresh_task
}
  MERGE (t)-[:FOR]->(i)
