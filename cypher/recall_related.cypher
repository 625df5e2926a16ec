// Active playbooks pinned to components the business walk never reaches but that still explain
// alerts: a configuration service an alerting component reads (one config edge), or a traffic
// source (client) whose calls reach an alerting component within 3 hops (weight 1).
MATCH (a:Component) WHERE a.name IN $alerting
MATCH p = (a)-[r:CALLS|READS_WRITES]->(c:Component)
WHERE r.purpose = 'config'
MATCH (pb:Playbook {status: 'active'})-[:PINNED_TO]->(c)
RETURN pb.id AS id, pb.title AS title, pb.failure_kind AS failure_kind, pb.trust AS trust,
       pb.checks_json AS checks_json, c.name AS candidate, c.name AS pinned_to,
       [n IN nodes(p) | n.name] AS path, length(p) AS hops
UNION
MATCH (a:Component) WHERE a.name IN $alerting
MATCH p = (c:Component {client: true})-[:CALLS*1..3]->(a)
WHERE all(r IN relationships(p) WHERE r.purpose = 'business')
MATCH (pb:Playbook {status: 'active'})-[:PINNED_TO]->(c)
RETURN pb.id AS id, pb.title AS title, pb.failure_kind AS failure_kind, pb.trust AS trust,
       pb.checks_json AS checks_json, c.name AS candidate, c.name AS pinned_to,
       [n IN reverse(nodes(p)) | n.name] AS path, length(p) AS hops
