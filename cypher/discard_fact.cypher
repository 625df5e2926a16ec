// The person discarded the read-back: the proposed preference is marked discarded (kept, never
// obeyed), and a `readback` task tells the thread. Only its author may. Returns nothing when there is no such proposed fact.
MATCH (p:Fact {id: $proposed_id, status: 'proposed'})
WHERE p.person = $person
SET p.status = 'discarded', p.discarded_at = timestamp()
WITH p
MATCH (i:Incident {id: p.incident_id})
MERGE (t:Task {id: 'readback-answer:' + $proposed_id})
  ON CREATE SET t += {kind: 'readback', incident_id: i.id, fact_id: $proposed_id,
// @include _fresh_task
}
MERGE (t)-[:FOR]->(i)
RETURN p.id AS id
