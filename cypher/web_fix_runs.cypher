// Per playbook, the runs of its fix that its verified/failed counts do not hold (yet), for the
// memory page: `unverified`, ran (`ran_at`) with no verification yet (it is under way), and
// `unrun`, approved but failed to run (no verification will come: docs/remediation.md).
MATCH (r:Remediation)
WHERE r.status IN ['running', 'failed'] AND NOT (r)-[:VERIFIED]->(:Verification)
RETURN r.playbook_id AS playbook,
       sum(CASE WHEN r.ran_at IS NOT NULL THEN 1 ELSE 0 END) AS unverified,
       sum(CASE WHEN r.ran_at IS NULL AND r.status = 'failed' THEN 1 ELSE 0 END) AS unrun
