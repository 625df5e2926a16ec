// New firing alerts of one delivery, grouped by `Triage.fast` exactly as `triage_alert` would
// group them one by one, written in one query. Python decided from `triage_context`'s `open`
// (the open incidents opened within [$lo, $hi]); the write happens only while that is still
// true: the same open incidents in the range with the same components, group keys and root
// causes ($expected, as `open` reads them), none of the alerts stored yet, and (with flapping
// on) no stored alert with one of $fingerprints. Else it writes nothing and triage goes on
// alert by alert. Writes to one graph are serialised, so the check and the write are atomic.
// $opened: [{id, task_id, props, held}] new incidents with their `investigate` tasks (props:
// as `triage_alert` creates one, with every alert of this write counted); $updates: [{id,
// firing, components, group_keys, rank, severity}] one row per open incident joined (firing:
// alerts added; components and group keys: the new lists; rank and severity: the highest of
// the alerts added, the first such); $reinvestigate: [{incident_id, component}] a component
// new to an open incident (a `reinvestigate` task; none while the incident's `investigate` task
// is unclaimed: it will read every alert, and settle_reinvestigations would delete it);
// $alert_rows: [[key, incident_id, component, via, then the values of `ALERT_PROPS` in
// agents/triage/triage.py, in its order]] (via null on the alert that opened its incident: a
// list, not a map, is what makes 5,000 of them cheap to send), grouped by incident and
// component; $runs: [[incident_id, component, first, end]], one per group (its
// rows are alert_rows[first..end-1]); $write: this write's id, kept on its first alert
// (`written_by`); $after: [first alert key, write id] of the delivery's write before this one
// (null for its first): the writes are sent before the one before answers (`SentInTurn`),
// and Python decided this one as if that one wrote, so it writes only if that one did (its
// alert stored by itself: the same alert in another delivery, an HA pair's duplicate, has no
// such id). Returns how many alerts were written (0: none) and `queued`: the `reinvestigate`
// tasks it left (0: nothing for settle_reinvestigations).
OPTIONAL MATCH (o:Incident {status: 'open'}) WHERE o.opened_at >= $lo AND o.opened_at <= $hi
WITH o ORDER BY o.id
WITH collect(CASE WHEN o IS NULL THEN null ELSE
  [o.id, o.opened_at, o.components, o.group_keys, coalesce(o.root_cause, '')] END) = $expected AS same
CALL {  // with $fingerprints, their check below covers the keys (fingerprint@startsAt)
  UNWIND CASE WHEN size($fingerprints) = 0 THEN $alert_rows ELSE [] END AS x
  OPTIONAL MATCH (old:Alert {key: x[0]})
  RETURN count(old) AS stored
}
CALL {
  UNWIND $fingerprints AS f
  OPTIONAL MATCH (old:Alert {fingerprint: f})
  RETURN count(old) AS refired
}
OPTIONAL MATCH (before:Alert {key: coalesce($after[0], '')}) WHERE before.written_by = $after[1]
WITH same AND stored = 0 AND refired = 0 AND ($after IS NULL OR before IS NOT NULL) AS ok
CALL {
  WITH ok
  UNWIND CASE WHEN ok THEN $opened ELSE [] END AS n
  CREATE (i:Incident {id: n.id})
  SET i += n.props, i.received_at = timestamp(),
      i.hold_until = CASE WHEN n.held THEN timestamp() + $hold_ms ELSE 0 END
  CREATE (:Task {id: n.task_id, kind: 'investigate', incident_id: n.id,
// @include _fresh_task
})-[:FOR]->(i)
}
CALL {
  WITH ok
  UNWIND CASE WHEN ok THEN $updates ELSE [] END AS u
  MATCH (i:Incident {id: u.id})
  SET i.firing = coalesce(i.firing, 0) + u.firing, i.components = u.components,
      i.group_keys = u.group_keys,
      i.severity = CASE WHEN u.rank > i.severity_rank THEN u.severity ELSE i.severity END,
      i.severity_rank = CASE WHEN u.rank > i.severity_rank THEN u.rank ELSE i.severity_rank END
}
CALL {
  WITH ok
  UNWIND CASE WHEN ok THEN $reinvestigate ELSE [] END AS r
  MATCH (i:Incident {id: r.incident_id})
  WITH r, i
  OPTIONAL MATCH (first:Task)-[:FOR]->(i)
  WHERE first.kind = 'investigate' AND first.status = 'open' AND first.epoch = 0
  WITH r, i, count(first) AS unread
  WHERE unread = 0
  MERGE (t:Task {id: 'reinvestigate:' + i.id + ':' + r.component})
    ON CREATE SET t += {kind: 'reinvestigate', incident_id: i.id,
// @include _fresh_task
}
  MERGE (t)-[:FOR]->(i)
  RETURN count(t) AS queued
}
CALL {
  WITH ok
  UNWIND CASE WHEN ok THEN $runs ELSE [] END AS run
  MATCH (i:Incident {id: run[0]})
  OPTIONAL MATCH (c:Component {name: coalesce(run[1], '')})
  UNWIND range(run[2], run[3] - 1) AS n
  WITH i, c, $alert_rows[n] AS x
  CREATE (a:Alert {key: x[0], component: x[2], fingerprint: x[4], alertname: x[5],
    severity: x[6], status: x[7], starts_at: x[8], starts_at_ms: x[9], ends_at_ms: x[10],
    labels_json: x[11], annotations_json: x[12], values_json: x[13], generator_url: x[14],
    link: x[15], group_key: x[16], receiver: x[17], source: x[18], silence_url: x[19],
    title: x[20], received_at: timestamp()})
  CREATE (i)-[:HAS_ALERT {via: x[3]}]->(a)
  FOREACH (_ IN CASE WHEN c IS NULL THEN [] ELSE [1] END | CREATE (a)-[:ON]->(c))
}
CALL {
  WITH ok
  UNWIND CASE WHEN ok THEN [$alert_rows[0][0]] ELSE [] END AS first
  MATCH (a:Alert {key: first})
  SET a.written_by = $write
}
RETURN CASE WHEN ok THEN size($alert_rows) ELSE 0 END AS written, queued
