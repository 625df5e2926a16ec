// An alert that links two open incidents (its component is within the correlation reach of a
// component of each, and a component of one of them reaches it: not only a common caller of
// both) merges them. Unpaged means nobody was paged for it yet: not notified,
// and its respond task does not exist, or waits (open, or paused by the page hold) with no
// Action reserved for it; the same of its `page` task (the page before a late diagnosis). The
// other one merges into the one the alert joined ($incident_id) while the other is unpaged;
// else the joined one merges into the other while the joined one is unpaged (the on-call of the
// paged one hears of it as a diagnosis update); two paged incidents stay apart. One merge per
// call (triage loops): per-row SETs on the same node would read stale values (FalkorDB 4.16).
// The merged incident keeps its id with status 'merged' and `merged_into`; its alerts move,
// their edges saying through which link (`via`), and so does a quiet window's hold; the
// survivor gets a `reinvestigate` task.
// A responder that claims a task of a merged incident finds the status and does nothing. An
// incident split off by cause (`split_from`) is never merged back.
MATCH (j:Incident {id: $incident_id}) WHERE j.status = 'open'
OPTIONAL MATCH (rj:Task {id: 'respond:' + j.id})
OPTIONAL MATCH (pj:Task {id: 'page:' + j.id})
WITH j, NOT coalesce(j.notified, false)
        AND (rj IS NULL OR (rj.status IN ['open', 'paused'] AND size([(j)<-[:FOR]-(x:Action) | x]) = 0))
        AND (pj IS NULL OR (pj.status IN ['open', 'paused'] AND size([(j)<-[:FOR]-(x:Action) | x]) = 0))
        AS j_unpaged
MATCH (o:Incident {status: 'open'})
WHERE o.id <> j.id AND size($near) > 0 AND any(x IN o.components WHERE x IN $near)
  // a link, not a common caller: one side reaches the alert's component ($down: what it
  // depends on, itself included). A caller of both (shop over orders and payments) is a victim
  // of either fault; it joins one, and two unrelated faults stay two incidents.
  AND (any(x IN o.components WHERE x IN $near AND NOT x IN $down)
       OR any(x IN j.components WHERE x IN $near AND NOT x IN $down))
  AND o.opened_at >= $starts_at_ms - $window_ms AND o.opened_at <= $starts_at_ms + $window_ms
  AND o.split_from IS NULL AND coalesce(j.split_from, '') <> o.id
OPTIONAL MATCH (r:Task {id: 'respond:' + o.id})
OPTIONAL MATCH (p:Task {id: 'page:' + o.id})
WITH j, j_unpaged, o, NOT coalesce(o.notified, false)
        AND (r IS NULL OR (r.status IN ['open', 'paused'] AND size([(o)<-[:FOR]-(x:Action) | x]) = 0))
        AND (p IS NULL OR (p.status IN ['open', 'paused'] AND size([(o)<-[:FOR]-(x:Action) | x]) = 0))
        AS o_unpaged
WITH j, o, o_unpaged WHERE o_unpaged OR j_unpaged
WITH j, o, o_unpaged ORDER BY o_unpaged DESC, o.opened_at LIMIT 1
WITH o, CASE WHEN o_unpaged THEN j ELSE o END AS i, CASE WHEN o_unpaged THEN o ELSE j END AS gone,
     [n IN range(0, size($near) - 1) WHERE $near[n] IN o.components] AS hits
MATCH (gone)-[h:HAS_ALERT]->(a:Alert)
WITH i, gone, hits, collect(h) AS edges, collect(a) AS moved
FOREACH (h IN edges | DELETE h)
FOREACH (a IN moved | CREATE (i)-[:HAS_ALERT {via: 'merged from ' + gone.id + ' through ' +
  $component + ' (' + $near_paths[hits[0]] + ')'}]->(a))
SET i.firing = coalesce(i.firing, 0) + coalesce(gone.firing, 0),
    i.components = i.components + [c IN gone.components WHERE NOT c IN i.components],
    i.group_keys = i.group_keys + [g IN gone.group_keys WHERE NOT g IN i.group_keys],
    i.severity = CASE WHEN gone.severity_rank > i.severity_rank THEN gone.severity ELSE i.severity END,
    i.severity_rank = CASE WHEN gone.severity_rank > i.severity_rank THEN gone.severity_rank
                           ELSE i.severity_rank END,
    gone.status = 'merged', gone.merged_into = i.id, gone.firing = 0
// A quiet window that holds the merged incident holds the survivor too (its alerts are the
// survivor's now, and the window names them): IN_MAINTENANCE edges (without `held_at`: they
// did not hold the survivor's page) and `maintenance_until`, so its escalation, its reopen's
// notice and its diagnosis update wait for the window's end (agents/respond/maintenance.py).
WITH i, gone
OPTIONAL MATCH (gone)-[:IN_MAINTENANCE]->(m:Maintenance) WHERE m.ends_at > timestamp()
WITH i, gone, collect(m) AS windows, max(m.ends_at) AS quiet
FOREACH (m IN windows | MERGE (i)-[:IN_MAINTENANCE]->(m))
SET i.maintenance_until = CASE WHEN quiet > coalesce(i.maintenance_until, 0) THEN quiet
                               ELSE i.maintenance_until END
MERGE (t:Task {id: 'reinvestigate:' + i.id + ':merge:' + gone.id})
  ON CREATE SET t += {kind: 'reinvestigate', incident_id: i.id,
// @include _fresh_task
}
MERGE (t)-[:FOR]->(i)
RETURN gone.id AS merged, i.id AS into
