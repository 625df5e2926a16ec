// The incidents list for triage at a glance, newest first: state, severity, the services that
// alert and their owning teams, the finding's candidates, the latest verdict, the page (its
// action and latest delivery; `nobody_paged`: it went out to no one, as `list_incidents.cypher`
// says), `heartbeat` (the alertname of a heartbeat's silence, else null), acknowledgement,
// escalation and maintenance (null or 0 until something records them). $now: ms UTC, for maintenance windows in force. Merged incidents
// (status 'merged') only when asked for by status.
MATCH (i:Incident)
WHERE ($status IS NULL AND i.status <> 'merged') OR i.status = $status
WITH i ORDER BY i.opened_at DESC, i.id LIMIT $limit
OPTIONAL MATCH (i)-[:HAS_FINDING]->(f:Finding)
WITH i, f
OPTIONAL MATCH (i)-[:HAS_ALERT]->(a:Alert)
OPTIONAL MATCH (a)-[:ON]->(c:Component)
WITH i, f, count(a) AS alerts, sum(CASE WHEN a.status = 'firing' THEN 1 ELSE 0 END) AS firing,
     collect(DISTINCT c.name) AS services, collect(DISTINCT a.alertname) AS alertnames
OPTIONAL MATCH (t:Team)-[:OWNS]->(o:Component) WHERE o.name IN services
WITH i, f, alerts, firing, services, alertnames, collect(DISTINCT t.name) AS teams
OPTIONAL MATCH (i)-[:HAS_VERDICT]->(v:Verdict) WHERE v.verdict IN ['confirmed', 'rejected']
WITH i, f, alerts, firing, services, alertnames, teams, v ORDER BY v.at DESC, coalesce(v.seq, 0) DESC
WITH i, f, alerts, firing, services, alertnames, teams,
     collect(CASE WHEN v IS NULL THEN NULL ELSE [v.verdict, v.actual_cause] END)[0] AS verdict
OPTIONAL MATCH (x:Action {intent_id: 'incident:' + i.id + ':initial-notification'})
OPTIONAL MATCH (i)-[:HAS_DELIVERY]->(d:Delivery)
// the latest record; among one attempt chain's (one timestamp) the delivery that went out.
// `delivery`: [outcome, channel, the channel it fell back from]
WITH i, f, alerts, firing, services, alertnames, teams, verdict, x, d
  ORDER BY d.at DESC, d.outcome = 'delivered' DESC
WITH i, f, alerts, firing, services, alertnames, teams, verdict, x,
     collect(CASE WHEN d IS NULL THEN NULL
                  ELSE [d.outcome, d.channel, d.fallback_from] END)[0] AS delivery
OPTIONAL MATCH (m:Maintenance)
  WHERE m.starts_at <= $now AND m.ends_at > $now
    AND any(name IN services WHERE name IN coalesce(m.components, []))
WITH i, f, alerts, firing, services, alertnames, teams, verdict, x, delivery,
     max(m.ends_at) AS window_ends
RETURN i.id AS id, i.status AS status, i.title AS title, i.severity AS severity,
       i.opened_at AS opened_at, i.resolved_at AS resolved_at, i.root_cause AS root_cause,
       f IS NOT NULL AS investigated, f.candidates AS candidates, f.confidence AS confidence, alerts, firing, services,
       alertnames, teams, verdict, x.status AS page_status,
       coalesce(x.updated_at, x.reserved_at) AS paged_at, delivery,
       i.acknowledged_at AS acknowledged_at, i.acknowledged_by AS acknowledged_by,
       coalesce(i.escalation_level, 0) AS escalation_level,
       coalesce(i.notified, false) AND NOT coalesce(i.page_reached, true) AS nobody_paged,
       i.heartbeat AS heartbeat,
       CASE WHEN i.maintenance_until IS NOT NULL AND i.maintenance_until > coalesce(window_ends, 0)
            THEN i.maintenance_until ELSE window_ends END AS maintenance_until
ORDER BY opened_at DESC, id
