// What happened to one incident, from the graph, for the page's timeline: one row per event
// (at: ms UTC; event; detail; who; ref). Parts that nothing wrote yet (no delivery record, no
// remediation) simply add no row. Sorted and worded by gateway/web/timeline.py.
// Alerts: the first $listed to fire (then the first $listed to resolve) one row each, the rest
// one row: `alerts_more` (`resolved_more`) at the first of them, detail how many (an incident
// of a storm has tens of thousands: the page folds them into one line).
MATCH (i:Incident {id: $incident_id})
RETURN i.opened_at AS at, 'opened' AS event, i.title AS detail, null AS who, null AS ref
UNION ALL
MATCH (:Incident {id: $incident_id})-[:HAS_ALERT]->(a:Alert)
WITH a ORDER BY a.starts_at_ms, a.key LIMIT $listed
OPTIONAL MATCH (a)-[:ON]->(c:Component)
RETURN a.starts_at_ms AS at, 'alert' AS event, a.alertname AS detail, c.name AS who,
       a.key AS ref
UNION ALL
MATCH (:Incident {id: $incident_id})-[:HAS_ALERT]->(a:Alert)
WITH a ORDER BY a.starts_at_ms, a.key SKIP $listed
RETURN min(a.starts_at_ms) AS at, 'alerts_more' AS event, count(a) AS detail, null AS who,
       null AS ref
UNION ALL
MATCH (:Incident {id: $incident_id})-[:HAS_ALERT]->(a:Alert)
WHERE a.status = 'resolved' AND a.ends_at_ms IS NOT NULL
WITH a ORDER BY a.ends_at_ms, a.key LIMIT $listed
OPTIONAL MATCH (a)-[:ON]->(c:Component)
RETURN a.ends_at_ms AS at, 'alert_resolved' AS event, a.alertname AS detail, c.name AS who,
       a.key AS ref
UNION ALL
MATCH (:Incident {id: $incident_id})-[:HAS_ALERT]->(a:Alert)
WHERE a.status = 'resolved' AND a.ends_at_ms IS NOT NULL
WITH a ORDER BY a.ends_at_ms, a.key SKIP $listed
RETURN min(a.ends_at_ms) AS at, 'resolved_more' AS event, count(a) AS detail, null AS who,
       null AS ref
UNION ALL
MATCH (:Incident {id: $incident_id})-[:HAS_FINDING]->(f:Finding)
RETURN coalesce(f.updated_at, f.created_at) AS at, 'finding' AS event, f.root_cause AS detail,
       null AS who, {candidates: f.candidates, confidence: f.confidence, planner: f.planner} AS ref
UNION ALL
MATCH (:Incident {id: $incident_id})-[r:IN_MAINTENANCE]->(m:Maintenance)
WHERE r.held_at IS NOT NULL  // a window that held a message (not a snooze's escalation hold)
RETURN r.held_at AS at, 'held' AS event, m.reason AS detail, m.by AS who,
       [m.ends_at, m.ended_by] AS ref
UNION ALL
MATCH (x:Action)-[:FOR]->(:Incident {id: $incident_id})
RETURN coalesce(x.updated_at, x.reserved_at) AS at, 'action' AS event, x.intent_id AS detail,
       x.status AS who, [x.kind, x.adapter, x.external_ref, x.notified] AS ref
UNION ALL
MATCH (:Incident {id: $incident_id})-[:HAS_DELIVERY]->(d:Delivery)
RETURN d.at AS at, 'delivery' AS event, d.outcome AS detail, d.channel AS who,
       [d.intent_id, d.reason, d.fallback_from, d.n] AS ref
UNION ALL
MATCH (i:Incident {id: $incident_id}) WHERE i.acknowledged_at IS NOT NULL
RETURN i.acknowledged_at AS at, 'acknowledged' AS event, null AS detail,
       i.acknowledged_by AS who, null AS ref
UNION ALL
MATCH (:Incident {id: $incident_id})-[:HAS_VERDICT]->(v:Verdict)
RETURN v.at AS at, 'verdict' AS event, v.verdict AS detail, coalesce(v.by_name, v.by) AS who,
       [v.actual_cause, v.text, v.source] AS ref
UNION ALL
MATCH (:Incident {id: $incident_id})-[:HAS_REMEDIATION]->(r:Remediation)
RETURN r.proposed_at AS at, 'remediation_proposed' AS event, r.type AS detail, null AS who,
       [r.id, r.playbook_id, r.status] AS ref
UNION ALL
MATCH (:Incident {id: $incident_id})-[:HAS_REMEDIATION]->(r:Remediation)-[:APPROVED_BY]->(p:Approval)
RETURN p.at AS at, 'remediation_approved' AS event, r.type AS detail, p.by AS who,
       [r.id, p.source] AS ref
UNION ALL
MATCH (:Incident {id: $incident_id})-[:HAS_REMEDIATION]->(r:Remediation)-[:REJECTED_BY]->(p:Rejection)
RETURN p.at AS at, 'remediation_rejected' AS event, r.type AS detail, p.by AS who,
       [r.id, p.source] AS ref
UNION ALL
MATCH (:Incident {id: $incident_id})-[:HAS_REMEDIATION]->(r:Remediation)-[:HAS_ATTEMPT]->(t:Attempt)
RETURN t.at AS at, 'remediation_run' AS event, r.type AS detail, t.outcome AS who,
       [r.id, toString(t.n), t.external_ref] AS ref
UNION ALL
MATCH (:Incident {id: $incident_id})-[:HAS_REMEDIATION]->(r:Remediation)-[:VERIFIED]->(v:Verification)
RETURN v.at AS at, 'remediation_verified' AS event, r.type AS detail, v.outcome AS who,
       [r.id, v.detail] AS ref
UNION ALL
MATCH (i:Incident {id: $incident_id}) WHERE i.resolved_at IS NOT NULL
RETURN i.resolved_at AS at, 'resolved' AS event, null AS detail, i.resolved_by AS who,
       null AS ref
