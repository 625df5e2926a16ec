// Reserve escalation level $level (Action `incident:<id>:escalate:<n>`, kind 'escalate') while
// the task's lease is held (fenced, and renewed for the send that follows), but only while
// nobody has acknowledged the incident, it is still open and no quiet window (a snooze) holds
// it: the acknowledgement and this check
// are serialised by the graph's write lock, so a level reserved after an acknowledgement
// cannot exist. `live`: the incident still escalates; `prior`: the status of an Action an earlier
// attempt reserved (null: none); `mine`: this attempt holds the reservation. The incident's
// `escalation_level` becomes $level when the level is reserved (the highest reached: a later
// round starts from level 1 again). `notified`: whom the level reaches, in words, for the
// incident's timeline.
WITH timestamp() AS now
MATCH (t:Task {id: $task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= now
SET t.lease_until = now + $lease_ms
WITH t, i, i.acknowledged_at IS NULL AND i.status = 'open'
  AND coalesce(i.maintenance_until, 0) <= now AS live
OPTIONAL MATCH (old:Action {intent_id: $intent_id})
WITH t, i, live, old.status AS prior
FOREACH (_ IN CASE WHEN live AND prior IS NULL THEN [1] ELSE [] END |
  MERGE (a:Action {intent_id: $intent_id})
    ON CREATE SET a.kind = 'escalate', a.status = 'reserved', a.attempt_id = $attempt_id,
      a.adapter = $adapter, a.reserved_at = timestamp(), a.incident_id = i.id,
      a.notified = $notified
  MERGE (a)-[:FOR]->(i)
  SET i.escalation_level = CASE WHEN coalesce(i.escalation_level, 0) < $level THEN $level
                                ELSE i.escalation_level END)
WITH i, live, prior
OPTIONAL MATCH (a:Action {intent_id: $intent_id})
RETURN live, prior, a IS NOT NULL AND a.attempt_id = $attempt_id AS mine, i.status AS status,
       i.acknowledged_at AS acknowledged_at, i.acknowledged_by AS acknowledged_by
