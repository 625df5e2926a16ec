// What the live page watches, per tenant: counters that move when the agents leave an event in
// the graph (a new or resolved alert, a new or resolved incident, a step checkpoint, a finding,
// an action reserved or sent, a verdict, a trust change) and the tasks held now (a claim).
// Polled about once a second (gateway/web/live.py), so it stays cheap: label counts, the
// Task.status and Alert.status indexes, and scans of the small Finding / Action / Playbook sets.
MATCH (a:Alert)
WITH count(a) AS alerts
OPTIONAL MATCH (r:Alert) WHERE r.status = 'resolved'
WITH alerts, count(r) AS resolved_alerts
OPTIONAL MATCH (i:Incident)
WITH alerts, resolved_alerts, count(i) AS incidents
OPTIONAL MATCH (ri:Incident) WHERE ri.status = 'resolved'
WITH alerts, resolved_alerts, incidents, count(ri) AS resolved_incidents
OPTIONAL MATCH (s:Step)
WITH alerts, resolved_alerts, incidents, resolved_incidents, count(s) AS steps
OPTIONAL MATCH (f:Finding)
WITH alerts, resolved_alerts, incidents, resolved_incidents, steps, count(f) AS findings,
     max(f.updated_at) AS finding_at
OPTIONAL MATCH (x:Action)
WITH alerts, resolved_alerts, incidents, resolved_incidents, steps, findings, finding_at,
     count(x) AS actions, max(coalesce(x.updated_at, x.reserved_at)) AS action_at
OPTIONAL MATCH (v:Verdict)
WITH alerts, resolved_alerts, incidents, resolved_incidents, steps, findings, finding_at,
     actions, action_at, count(v) AS verdicts
OPTIONAL MATCH (pb:Playbook)
WITH alerts, resolved_alerts, incidents, resolved_incidents, steps, findings, finding_at,
     actions, action_at, verdicts, count(pb) AS playbooks,
     sum(pb.helped + pb.misled) AS trust_moves
OPTIONAL MATCH (t:Task) WHERE t.status = 'claimed'
RETURN alerts, resolved_alerts, incidents, resolved_incidents, steps, findings, finding_at,
       actions, action_at, verdicts, playbooks, trust_moves,
       collect(t.id + ' ' + toString(t.epoch) + ' ' + t.kind + ' ' + t.owner) AS claims
