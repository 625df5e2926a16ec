// A verified person's decision on a proposed remediation: $decision 'approved' or 'rejected',
// by $by (the person's name) identified as $identity through $source ('slack' or 'web'), at
// the database clock. Only a remediation still 'proposed' changes (one query: of two
// concurrent clicks, one decides, the other finds it decided); an approval enqueues its one
// `remediate` task (id `remediate:<remediation id>`), and either decision the one
// `edit_proposal` task (id `edit_proposal:<remediation id>`) that edits the proposal's message
// to say who decided, without its buttons. `fresh` says whether this call decided.
MATCH (i:Incident)-[:HAS_REMEDIATION]->(r:Remediation {id: $remediation_id})
WITH i, r, r.status = 'proposed' AS fresh
FOREACH (_ IN CASE WHEN fresh THEN [1] ELSE [] END |
  SET r.status = $decision, r.decided_at = timestamp())
FOREACH (_ IN CASE WHEN fresh AND $decision = 'approved' THEN [1] ELSE [] END |
  CREATE (r)-[:APPROVED_BY]->(:Approval {by: $by, identity: $identity, source: $source, at: timestamp()})
  MERGE (n:Task {id: 'remediate:' + r.id})
    ON CREATE SET n += {kind: 'remediate', incident_id: i.id, remediation_id: r.id,
// @include _fresh_task
}
  MERGE (n)-[:FOR]->(i))
FOREACH (_ IN CASE WHEN fresh AND $decision = 'rejected' THEN [1] ELSE [] END |
  CREATE (r)-[:REJECTED_BY]->(:Rejection {by: $by, identity: $identity, source: $source, at: timestamp()}))
FOREACH (_ IN CASE WHEN fresh THEN [1] ELSE [] END |
  MERGE (e:Task {id: 'edit_proposal:' + r.id})
    ON CREATE SET e += {kind: 'edit_proposal', incident_id: i.id, remediation_id: r.id,
// @include _fresh_task
}
  MERGE (e)-[:FOR]->(i))
WITH r, fresh
OPTIONAL MATCH (r)-[:APPROVED_BY]->(ap:Approval)
OPTIONAL MATCH (r)-[:REJECTED_BY]->(rj:Rejection)
RETURN r.id AS id, r.status AS status, fresh, ap {.*} AS approval, rj {.*} AS rejection
