// The record of a playbook's fix on a component: the other remediations of playbook
// $playbook_id on $component that ran (`ran_at`), newest first, at most $limit, each with its
// incident, when it ran (ms), its status and its verification's outcome, time and detail
// (null while none). What a proposal of the same fix says of it (`agents.act.notices.record`).
MATCH (r:Remediation {playbook_id: $playbook_id})
WHERE r.component = $component AND r.id <> $remediation_id AND r.ran_at IS NOT NULL
OPTIONAL MATCH (r)-[:VERIFIED]->(v:Verification)
RETURN r.incident_id AS incident_id, r.ran_at AS ran_at, r.status AS status,
       v.outcome AS outcome, v.at AS verified_at, v.detail AS detail
ORDER BY r.ran_at DESC, r.id
LIMIT $limit
