// An alert that links two open incidents (its component is within the correlation reach of a
// component of each) merges the younger one into the one it joined, while nobody has been paged
// for it yet: its respond task does not exist or was never claimed. One incident per call
// (triage loops): per-row SETs on the same node would read stale values (FalkorDB 4.16).
// The merged incident keeps its id with status 'merged' and `merged_into`; its alerts move,
// their edges saying through which link (`via`); the survivor gets a `reinvestigate` task.
// A responder that claims a task of a merged incident finds the status and does nothing. An
// incident split off by cause (`split_from`) is never merged back.
MATCH (i:Incident {id: $incident_id}) WHERE i.status = 'open'
MATCH (o:Incident {status: 'open'})
WHERE o.id <> i.id AND size($near) > 0 AND any(x IN o.components WHERE x IN $near)
  AND o.opened_at >= $starts_at_ms - $window_ms AND o.opened_at <= $starts_at_ms + $window_ms
  AND NOT coalesce(o.notified, false)
  AND o.split_from IS NULL AND coalesce(i.split_from, '') <> o.id
OPTIONAL MATCH (r:Task {id: 'respond:' + o.id})
WITH i, o, r WHERE r IS NULL OR (r.status = 'open' AND r.epoch = 0)
WITH i, o ORDER BY o.opened_at LIMIT 1
WITH i, o, [n IN range(0, size($near) - 1) WHERE $near[n] IN o.components] AS hits
MATCH (o)-[h:HAS_ALERT]->(a:Alert)
WITH i, o, hits, collect(h) AS edges, collect(a) AS moved
FOREACH (h IN edges | DELETE h)
FOREACH (a IN moved | CREATE (i)-[:HAS_ALERT {via: 'merged from ' + o.id + ' through ' +
  $component + ' (' + $near_paths[hits[0]] + ')'}]->(a))
SET i.firing = coalesce(i.firing, 0) + coalesce(o.firing, 0),
    i.components = i.components + [c IN o.components WHERE NOT c IN i.components],
    i.group_keys = i.group_keys + [g IN o.group_keys WHERE NOT g IN i.group_keys],
    i.severity = CASE WHEN o.severity_rank > i.severity_rank THEN o.severity ELSE i.severity END,
    i.severity_rank = CASE WHEN o.severity_rank > i.severity_rank THEN o.severity_rank
                           ELSE i.severity_rank END,
    o.status = 'merged', o.merged_into = i.id, o.firing = 0
MERGE (t:Task {id: 'reinvestigate:' + i.id + ':merge:' + o.id})
  ON CREATE SET t.kind = 'reinvestigate', t.status = 'open', t.owner = '', t.attempt_id = '',
    t.epoch = 0, t.attempts = 0, t.lease_until = 0, t.created_at = timestamp(), t.incident_id = i.id
MERGE (t)-[:FOR]->(i)
RETURN o.id AS merged, i.id AS into
