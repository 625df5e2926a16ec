// The person approved the read-back: the approved version SUPERSEDES the proposed one and
// any earlier approved preference of theirs for the same failure kind; all stay in the graph.
// Only the person who stated it can approve it. Idempotent by the approved fact's id.
// A `readback` task tells the thread it was saved.
MATCH (p:Fact {id: $proposed_id, status: 'proposed'})
WHERE p.person = $person
OPTIONAL MATCH (older:Fact {kind: 'preference', status: 'approved', person: $person})
WHERE older.failure_kind = p.failure_kind AND NOT (older)<-[:SUPERSEDES]-(:Fact)
WITH p, collect(older) AS olders
MERGE (a:Fact {id: $proposed_id + ':approved'})
  ON CREATE SET a.kind = 'preference', a.status = 'approved', a.person = p.person,
    a.person_name = p.person_name, a.failure_kind = p.failure_kind, a.no_page = p.no_page,
    a.ticket = p.ticket, a.detail = p.detail, a.text = p.text, a.stated_at = p.stated_at,
    a.approved_at = timestamp(), a.incident_id = p.incident_id
MERGE (a)-[:SUPERSEDES]->(p)
FOREACH (o IN olders | MERGE (a)-[:SUPERSEDES]->(o))
WITH a, p
MATCH (i:Incident {id: p.incident_id})
MERGE (t:Task {id: 'readback-answer:' + $proposed_id})
  ON CREATE SET t += {kind: 'readback', incident_id: i.id, fact_id: $proposed_id,
// @include _fresh_task
}
MERGE (t)-[:FOR]->(i)
RETURN a.id AS id, a.approved_at AS approved_at
