// Acknowledge an open incident once: `acknowledged_by` (a person's name) and `acknowledged_at`
// (database clock, ms). `fresh` is true only for the acknowledgement that took effect; a
// repeat, or an incident no longer open, changes nothing. The first one also creates the
// responder's `notify_state` task that edits the page to say so: `notify_state:ack:<id>`, or,
// once a failed remediation retriggered the incident k times (which clears the
// acknowledgement, record_verification.cypher), `notify_state:ack:retrigger:<k>:<id>`, so each
// round's acknowledgement edits the page once, as `notify_state:retrigger:<k>:<id>` restated it.
MATCH (i:Incident {id: $incident_id})
WITH i, i.status = 'open' AND i.acknowledged_at IS NULL AS fresh
SET i.acknowledged_at = CASE WHEN fresh THEN timestamp() ELSE i.acknowledged_at END,
    i.acknowledged_by = CASE WHEN fresh THEN $by ELSE i.acknowledged_by END
WITH i, fresh, coalesce(i.retriggers, 0) AS k
FOREACH (_ IN CASE WHEN fresh THEN [1] ELSE [] END |
  MERGE (t:Task {id: CASE WHEN k = 0 THEN 'notify_state:ack:' + i.id
                     ELSE 'notify_state:ack:retrigger:' + toString(k) + ':' + i.id END})
    ON CREATE SET t += {kind: 'notify_state', incident_id: i.id,
// @include _fresh_task
}
  MERGE (t)-[:FOR]->(i)
)
RETURN i.id AS id, i.status AS status, i.acknowledged_at AS acknowledged_at,
       i.acknowledged_by AS acknowledged_by, i.merged_into AS merged_into, fresh
