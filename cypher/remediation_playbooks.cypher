// The active playbooks that carry a remediation, by its type: how many, and the first five
// ids (by id). `serve` and `doctor` say which cannot run without a credential
// (agents/act/run.py, missing_credential).
MATCH (pb:Playbook {status: 'active'}) WHERE pb.remediation_type IS NOT NULL
WITH pb.remediation_type AS type, pb.id AS id ORDER BY id
RETURN type, count(id) AS playbooks, collect(id)[0..5] AS ids
ORDER BY type
