// The newest incidents first, with counts of alerts and of firing alerts, and whether a finding
// was written (`investigated`: an inconclusive one has no root cause but a finding). Incidents merged into
// another (status 'merged') are listed only when asked for by status. The on-call state rides
// along: whether its people were paged (`paged`: a page reached a person on call or a channel;
// `nobody_paged`: the page went out to no one, no team on call and no channel), who
// acknowledged, the escalation level reached, a quiet window holding the page; and the latest
// verdict that confirmed or corrected the cause. An incident paged before `page_reached` was
// kept counts as paged once notified. `delivered_to`: where its page was last delivered (a
// Slack channel, or `outbox`: the local file only, no messenger took it), null before any.
// `heartbeat`: the alertname of the heartbeat whose silence the incident is (no service caused
// it), else null.
MATCH (i:Incident)
WHERE ($status IS NULL AND i.status <> 'merged') OR i.status = $status
WITH i ORDER BY i.opened_at DESC, i.id LIMIT $limit
OPTIONAL MATCH (i)-[:HAS_FINDING]->(f:Finding)
WITH i, f IS NOT NULL AS investigated, f.candidates AS candidates, f.confidence AS confidence
// the latest confirmation or correction, which outranks the finding (as on the web page)
OPTIONAL MATCH (i)-[:HAS_VERDICT]->(v:Verdict) WHERE v.verdict IN ['confirmed', 'rejected']
WITH i, investigated, candidates, confidence, v ORDER BY v.at DESC, coalesce(v.seq, 0) DESC
WITH i, investigated, candidates, confidence,
     collect(CASE WHEN v IS NULL THEN NULL ELSE {verdict: v.verdict, actual_cause: v.actual_cause,
             by: coalesce(v.by_name, v.by)} END)[0] AS verdict
OPTIONAL MATCH (i)-[:HAS_DELIVERY]->(d:Delivery) WHERE d.outcome = 'delivered'
WITH i, investigated, candidates, confidence, verdict, d ORDER BY d.at DESC
WITH i, investigated, candidates, confidence, verdict, collect(d.channel)[0] AS delivered_to
OPTIONAL MATCH (i)-[:HAS_ALERT]->(a:Alert)
RETURN i.id AS id, i.status AS status, i.title AS title, i.severity AS severity,
       i.opened_at AS opened_at, i.resolved_at AS resolved_at, i.root_cause AS root_cause,
       i.heartbeat AS heartbeat, investigated, candidates, confidence, verdict, coalesce(i.notified, false) AND coalesce(i.page_reached, true) AS paged,
       coalesce(i.notified, false) AND NOT coalesce(i.page_reached, true) AS nobody_paged,
       delivered_to, i.acknowledged_by AS acknowledged_by,
       coalesce(i.escalation_level, 0) AS escalation_level, i.maintenance_until AS maintenance_until,
       count(a) AS alerts, sum(CASE WHEN a.status = 'firing' THEN 1 ELSE 0 END) AS firing
ORDER BY opened_at DESC, id
