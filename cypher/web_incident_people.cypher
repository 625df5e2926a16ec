// Who is on one incident beyond the page itself: acknowledgement, escalation, resolution and
// maintenance (null until something records them), the latest delivery of each page intent,
// the escalation actions, and the remediations with their approvals, attempts and checks.
MATCH (i:Incident {id: $incident_id})
OPTIONAL MATCH (i)-[:HAS_DELIVERY]->(d:Delivery)
// the records of one attempt chain share one timestamp: among equals the delivery that went out
// comes last, so the page's header (the last record) says where the page landed
WITH i, d ORDER BY d.at, d.outcome = 'delivered'
WITH i, collect(CASE WHEN d IS NULL THEN NULL ELSE {intent_id: d.intent_id, at: d.at,
     channel: d.channel, outcome: d.outcome, reason: d.reason,
     fallback_from: d.fallback_from} END) AS deliveries
OPTIONAL MATCH (x:Action)-[:FOR]->(i) WHERE x.kind = 'escalate'
WITH i, deliveries, x ORDER BY x.reserved_at
WITH i, deliveries, collect(CASE WHEN x IS NULL THEN NULL ELSE {intent_id: x.intent_id,
     status: x.status, at: x.reserved_at, ref: x.external_ref} END) AS escalations
OPTIONAL MATCH (i)-[:HAS_REMEDIATION]->(r:Remediation)
OPTIONAL MATCH (r)-[:APPROVED_BY]->(p:Approval)
OPTIONAL MATCH (r)-[:VERIFIED]->(v:Verification)
WITH i, deliveries, escalations, r, collect(p.by) AS approved_by, collect(v.outcome) AS verified
WITH i, deliveries, escalations, collect(CASE WHEN r IS NULL THEN NULL ELSE {id: r.id,
     playbook_id: r.playbook_id, type: r.type, status: r.status, proposed_at: r.proposed_at,
     approved_by: approved_by, verified: verified} END) AS remediations
RETURN i.acknowledged_at AS acknowledged_at, i.acknowledged_by AS acknowledged_by,
       i.resolved_by AS resolved_by, coalesce(i.escalation_level, 0) AS escalation_level,
       i.maintenance_until AS maintenance_until, deliveries, escalations, remediations
