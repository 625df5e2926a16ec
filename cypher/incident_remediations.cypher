// An incident's remediations (newest first) with their decision, attempts and verification,
// for the incident's web page and API.
MATCH (i:Incident {id: $incident_id})-[:HAS_REMEDIATION]->(r:Remediation)
OPTIONAL MATCH (r)-[:HAS_ATTEMPT]->(at:Attempt)
WITH r, at ORDER BY at.n
WITH r, collect(at {.*}) AS attempts
OPTIONAL MATCH (r)-[:APPROVED_BY]->(ap:Approval)
OPTIONAL MATCH (r)-[:REJECTED_BY]->(rj:Rejection)
OPTIONAL MATCH (r)-[:VERIFIED]->(v:Verification)
RETURN r {.*} AS remediation, attempts, ap {.*} AS approval, rj {.*} AS rejection,
       v {.*} AS verification
ORDER BY r.proposed_at DESC, r.id
