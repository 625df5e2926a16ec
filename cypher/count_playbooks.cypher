// How many playbooks the tenant keeps that are not retired (learned or written by a person),
// and whether $id already names one (a repeat of an idempotent POST): the playbook quota.
OPTIONAL MATCH (pb:Playbook)
WHERE pb.status <> 'retired'
WITH count(pb) AS kept
OPTIONAL MATCH (old:Playbook {id: $id})
RETURN kept, old IS NOT NULL AS exists
