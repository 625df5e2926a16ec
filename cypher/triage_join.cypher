// A batch of new firing alerts on one component ($component), in delivery order, joins the open
// incident $incident_id that an earlier alert of the same delivery and component joined or
// opened (`triage_alert`), in one write. Written: the longest first part of the batch in which
// every alert goes where `triage_alert` would have put it: not stored yet, the incident opened
// within its window, and no other open incident in its window ranks at least as high for it
// (explained by its root cause first, then nearest, then oldest, then lowest id; this incident already holds
// $component, at distance 0). The first alert that does not fit goes through `triage_alert`
// on its own (it may open an incident the alerts after it must see), then the rest are batched
// again. $alerts: [{key, rank, props}] (rank: severity rank; props: the Alert's properties),
// distinct keys; $near, $down as for `triage_alert`; $via: the path text of $component itself.
// The incident's firing count, group keys and severity move once for the whole batch (per-row
// SETs on one node read stale values, FalkorDB 4.16). No task here: the component is already
// among the incident's, and `settle_reinvestigations` ($joined) gives the incident one
// re-investigation for the delivery. Returns how many alerts were written (none: no row).
// (a CASE, not `… OR o.id < i.id`: FalkorDB 4.16 answers that from the id index wrongly)
MATCH (i:Incident {id: $incident_id})
WHERE i.status = 'open' AND $component IN i.components
MATCH (c:Component {name: $component})
UNWIND range(0, size($alerts) - 1) AS n
WITH i, c, n, $alerts[n] AS x
OPTIONAL MATCH (old:Alert {key: x.key})
WITH i, c, n, x, CASE WHEN i.root_cause IN $down THEN 0 ELSE 1 END AS mine,
     (old IS NULL AND i.opened_at >= x.props.starts_at_ms - $window_ms
      AND i.opened_at <= x.props.starts_at_ms + $window_ms) AS fits
OPTIONAL MATCH (o:Incident {status: 'open'})
WHERE fits AND o.id <> i.id
  AND o.opened_at >= x.props.starts_at_ms - $window_ms
  AND o.opened_at <= x.props.starts_at_ms + $window_ms
  AND any(m IN $near WHERE m IN o.components)
  AND (CASE WHEN o.root_cause IN $down THEN 0 ELSE 1 END < mine
    OR (CASE WHEN o.root_cause IN $down THEN 0 ELSE 1 END = mine
        AND $component IN o.components
        AND CASE WHEN o.opened_at = i.opened_at THEN o.id < i.id
           ELSE o.opened_at < i.opened_at END))
WITH i, c, n, fits, count(o) AS better
WITH i, c, min(CASE WHEN fits AND better = 0 THEN null ELSE n END) AS cut
WITH i, c, coalesce(cut, size($alerts)) AS cut
WHERE cut > 0
UNWIND range(0, cut - 1) AS n
WITH i, c, $alerts[n] AS x
CREATE (a:Alert {key: x.key})
SET a += x.props, a.received_at = timestamp(), a.component = $component
CREATE (a)-[:ON]->(c)
CREATE (i)-[:HAS_ALERT {via: $via}]->(a)
WITH i, collect(x) AS xs
WITH i, xs, reduce(top = head(xs), y IN xs | CASE WHEN y.rank > top.rank THEN y ELSE top END) AS top,
     reduce(gs = [], y IN xs | CASE WHEN y.props.group_key IN gs THEN gs
                                    ELSE gs + [y.props.group_key] END) AS groups
SET i.firing = coalesce(i.firing, 0) + size(xs),
    i.group_keys = i.group_keys + [g IN groups WHERE NOT g IN i.group_keys],
    i.severity = CASE WHEN top.rank > i.severity_rank THEN top.props.severity ELSE i.severity END,
    i.severity_rank = CASE WHEN top.rank > i.severity_rank THEN top.rank ELSE i.severity_rank END
RETURN size(xs) AS written
