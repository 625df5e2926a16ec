// One remediation with what acting on it needs: its incident, the teams that may approve it
// (the owners of its component, else the default team: the root route) with their members
// and approvers (people), its approval or rejection, how many attempts it had, and its
// playbook's checks (the verifier reads the failure-ratio threshold there).
MATCH (i:Incident)-[:HAS_REMEDIATION]->(r:Remediation {id: $remediation_id})
OPTIONAL MATCH (r)-[:HAS_ATTEMPT]->(at:Attempt)
WITH i, r, count(at) AS attempts
OPTIONAL MATCH (pb:Playbook {id: r.playbook_id})
WITH i, r, attempts, pb.checks_json AS checks_json, pb.title AS playbook_title
OPTIONAL MATCH (r)-[:APPROVED_BY]->(ap:Approval)
OPTIONAL MATCH (r)-[:REJECTED_BY]->(rj:Rejection)
OPTIONAL MATCH (r)-[:VERIFIED]->(v:Verification)
OPTIONAL MATCH (owner:Team)-[:OWNS]->(:Component {name: coalesce(r.component, '')})
WITH i, r, attempts, checks_json, playbook_title, ap, rj, v, collect(owner) AS owners
OPTIONAL MATCH (fallback:Team {is_default: true})
WITH i, r, attempts, checks_json, playbook_title, ap, rj, v, owners, collect(fallback) AS fallbacks
WITH i, r, attempts, checks_json, playbook_title, ap, rj, v,
     CASE WHEN size(owners) > 0 THEN owners ELSE fallbacks END AS teams
UNWIND CASE WHEN size(teams) = 0 THEN [null] ELSE teams END AS t
OPTIONAL MATCH (m:Person)-[:MEMBER_OF]->(t)
WITH i, r, attempts, checks_json, playbook_title, ap, rj, v, t, collect(m {.name, .email, .slack_user_id}) AS members
OPTIONAL MATCH (a:Person) WHERE t IS NOT NULL AND a.name IN coalesce(t.approvers, [])
WITH i, r, attempts, checks_json, playbook_title, ap, rj, v, t, members, collect(a {.name, .email, .slack_user_id}) AS approvers
RETURN r {.*} AS remediation, i.id AS incident_id, i.status AS incident_status,
       i.title AS title, i.severity AS severity, i.opened_at AS opened_at,
       i.root_cause AS root_cause, attempts, checks_json, playbook_title,
       ap {.*} AS approval, rj {.*} AS rejection, v {.*} AS verification,
       collect(CASE WHEN t IS NULL THEN null ELSE {team: t.name, members: members, approvers: approvers} END) AS teams
