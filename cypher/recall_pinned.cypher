// Active playbooks pinned to a component within 0-2 business dependency hops of an alerting
// component, with the path the walk took (recall by the walk; weight 1).
MATCH (a:Component) WHERE a.name IN $alerting
MATCH p = (a)-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..2]->(c:Component)
WHERE all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
MATCH (pb:Playbook {status: 'active'})-[:PINNED_TO]->(c)
RETURN pb.id AS id, pb.title AS title, pb.failure_kind AS failure_kind, pb.trust AS trust,
       pb.checks_json AS checks_json, c.name AS candidate, c.name AS pinned_to,
       [n IN nodes(p) | n.name] AS path, length(p) AS hops
ORDER BY hops, id
