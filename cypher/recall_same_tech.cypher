// Active playbooks learned on another component of the same tech as a component within 0-2
// business hops of an alerting one (kind transfer, e.g. another PostgreSQL; weight 1/2).
MATCH (a:Component) WHERE a.name IN $alerting
MATCH p = (a)-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..2]->(c:Component)
WHERE c.tech IS NOT NULL AND all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
MATCH (pb:Playbook {status: 'active'})-[:PINNED_TO]->(o:Component)
WHERE o.tech = c.tech AND o <> c
RETURN pb.id AS id, pb.title AS title, pb.failure_kind AS failure_kind, pb.trust AS trust,
       pb.checks_json AS checks_json, c.name AS candidate, o.name AS pinned_to,
       [n IN nodes(p) | n.name] AS path, length(p) AS hops
ORDER BY hops, id
