// `triage_join` for new firing alerts that match no component: in delivery order, they join the
// open incident $incident_id of their Alertmanager group ($group_key) that an earlier alert of
// the same delivery joined or opened, in one write. Written: the longest first part of the batch
// in which every alert goes where `triage_alert` would have put it: not stored yet, the incident
// opened within its window and holds the group, and no older open incident in its window holds
// the group (of two opened in the same ms, the lower id counts as older, as in `triage_alert`). The first alert that does not fit goes through `triage_alert` on its own.
// $alerts: [{key, rank, props}] as for `triage_join`; every alert has group key $group_key.
// Returns how many alerts were written (none: no row).
// (a CASE, not `… OR o.id < i.id`: FalkorDB 4.16 answers that from the id index wrongly)
MATCH (i:Incident {id: $incident_id})
WHERE i.status = 'open' AND $group_key <> '' AND $group_key IN i.group_keys
UNWIND range(0, size($alerts) - 1) AS n
WITH i, n, $alerts[n] AS x
OPTIONAL MATCH (old:Alert {key: x.key})
WITH i, n, x, (old IS NULL AND i.opened_at >= x.props.starts_at_ms - $window_ms
               AND i.opened_at <= x.props.starts_at_ms + $window_ms) AS fits
OPTIONAL MATCH (o:Incident {status: 'open'})
WHERE fits AND o.id <> i.id
  AND o.opened_at >= x.props.starts_at_ms - $window_ms
  AND o.opened_at <= x.props.starts_at_ms + $window_ms
  AND $group_key IN o.group_keys
  AND CASE WHEN o.opened_at = i.opened_at THEN o.id < i.id
           ELSE o.opened_at < i.opened_at END
WITH i, n, fits, count(o) AS better
WITH i, min(CASE WHEN fits AND better = 0 THEN null ELSE n END) AS cut
WITH i, coalesce(cut, size($alerts)) AS cut
WHERE cut > 0
UNWIND range(0, cut - 1) AS n
WITH i, $alerts[n] AS x
CREATE (a:Alert {key: x.key})
SET a += x.props, a.received_at = timestamp()
CREATE (i)-[:HAS_ALERT {via: 'same Alertmanager group ' + $group_key}]->(a)
WITH i, collect(x) AS xs
WITH i, xs, reduce(top = head(xs), y IN xs | CASE WHEN y.rank > top.rank THEN y ELSE top END) AS top
SET i.firing = coalesce(i.firing, 0) + size(xs),
    i.severity = CASE WHEN top.rank > i.severity_rank THEN top.props.severity ELSE i.severity END,
    i.severity_rank = CASE WHEN top.rank > i.severity_rank THEN top.rank ELSE i.severity_rank END
RETURN size(xs) AS written
