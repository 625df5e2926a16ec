// Recall (agents/investigate/recall.py) in one round trip: the playbooks that could explain an incident
// whose alerting components are $alerting, from four sources, each row naming its `source`
// (0, 1, 2, 3: the order recall prefers among equal scores; its weight is set in recall.py):
// 0. pinned within 0-2 business hops of an alerting component (weight 1);
// 1. pinned where the business walk does not go but a failure still explains alerts: a
//    configuration service an alerting component reads, a client (traffic source) upstream
//    within 1-3 calls (weight 1);
// 2. learned on another component of the same tech as one within the 0-2 hop reach (weight 1/2,
//    "kind transfer");
// 3. pinned to a caller of an alerting component within 1-3 calls, or to a producer of a topic
//    an alerting component consumes, whose playbook a person taught by naming it (`upstream`:
//    a batch holding locks on the database that alerts, a producer whose consumers starve)
//    (weight 1; listed after the others: nothing alerting depends on it).
// Only active playbooks: a retired one is never recalled.
MATCH (a:Component) WHERE a.name IN $alerting
MATCH p = (a)-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..2]->(c:Component)
WHERE all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
MATCH (pb:Playbook {status: 'active'})-[:PINNED_TO]->(c)
RETURN pb.id AS id, pb.title AS title, pb.failure_kind AS failure_kind, pb.trust AS trust,
       pb.checks_json AS checks_json, pb.learned_from AS learned_from,
       pb.confirmed_by AS confirmed_by, pb.lesson AS lesson, pb.learned_at AS learned_at, pb.helped AS helped, pb.corrected_from AS corrected_from, pb.corrected_also AS corrected_also, c.name AS candidate, c.client = true AS client, c.name AS pinned_to,
       [n IN nodes(p) | n.name] AS path, length(p) AS hops, 0 AS source
UNION ALL
MATCH (a:Component) WHERE a.name IN $alerting
MATCH p = (a)-[r:CALLS|READS_WRITES]->(c:Component)
WHERE r.purpose = 'config'
MATCH (pb:Playbook {status: 'active'})-[:PINNED_TO]->(c)
RETURN pb.id AS id, pb.title AS title, pb.failure_kind AS failure_kind, pb.trust AS trust,
       pb.checks_json AS checks_json, pb.learned_from AS learned_from,
       pb.confirmed_by AS confirmed_by, pb.lesson AS lesson, pb.learned_at AS learned_at, pb.helped AS helped, pb.corrected_from AS corrected_from, pb.corrected_also AS corrected_also, c.name AS candidate, c.client = true AS client, c.name AS pinned_to,
       [n IN nodes(p) | n.name] AS path, length(p) AS hops, 1 AS source
UNION ALL
MATCH (a:Component) WHERE a.name IN $alerting
MATCH p = (c:Component {client: true})-[:CALLS*1..3]->(a)
WHERE all(r IN relationships(p) WHERE r.purpose = 'business')
MATCH (pb:Playbook {status: 'active'})-[:PINNED_TO]->(c)
RETURN pb.id AS id, pb.title AS title, pb.failure_kind AS failure_kind, pb.trust AS trust,
       pb.checks_json AS checks_json, pb.learned_from AS learned_from,
       pb.confirmed_by AS confirmed_by, pb.lesson AS lesson, pb.learned_at AS learned_at, pb.helped AS helped, pb.corrected_from AS corrected_from, pb.corrected_also AS corrected_also, c.name AS candidate, c.client = true AS client, c.name AS pinned_to,
       [n IN reverse(nodes(p)) | n.name] AS path, length(p) AS hops, 1 AS source
UNION ALL
MATCH (pb:Playbook {status: 'active', upstream: true})-[:PINNED_TO]->(c:Component)
MATCH p = (c)-[:CALLS|READS_WRITES*1..3]->(a:Component)
WHERE a.name IN $alerting AND all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
RETURN pb.id AS id, pb.title AS title, pb.failure_kind AS failure_kind, pb.trust AS trust,
       pb.checks_json AS checks_json, pb.learned_from AS learned_from,
       pb.confirmed_by AS confirmed_by, pb.lesson AS lesson, pb.learned_at AS learned_at, pb.helped AS helped, pb.corrected_from AS corrected_from, pb.corrected_also AS corrected_also, c.name AS candidate, c.client = true AS client, c.name AS pinned_to,
       [n IN reverse(nodes(p)) | n.name] AS path, length(p) AS hops, 3 AS source
UNION ALL
MATCH (a:Component) WHERE a.name IN $alerting
MATCH (a)-[r1:CONSUMES]->(t:Component)<-[r2:PUBLISHES]-(c:Component)
WHERE r1.purpose = 'business' AND r2.purpose = 'business' AND r1.retired_at IS NULL AND r2.retired_at IS NULL
MATCH (pb:Playbook {status: 'active', upstream: true})-[:PINNED_TO]->(c)
RETURN pb.id AS id, pb.title AS title, pb.failure_kind AS failure_kind, pb.trust AS trust,
       pb.checks_json AS checks_json, pb.learned_from AS learned_from,
       pb.confirmed_by AS confirmed_by, pb.lesson AS lesson, pb.learned_at AS learned_at, pb.helped AS helped, pb.corrected_from AS corrected_from, pb.corrected_also AS corrected_also, c.name AS candidate, c.client = true AS client, c.name AS pinned_to,
       [a.name, t.name, c.name] AS path, 2 AS hops, 3 AS source
UNION ALL
MATCH (a:Component) WHERE a.name IN $alerting
MATCH p = (a)-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..2]->(c:Component)
WHERE c.tech IS NOT NULL AND all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
MATCH (pb:Playbook {status: 'active'})-[:PINNED_TO]->(o:Component)
WHERE o.tech = c.tech AND o <> c
RETURN pb.id AS id, pb.title AS title, pb.failure_kind AS failure_kind, pb.trust AS trust,
       pb.checks_json AS checks_json, pb.learned_from AS learned_from,
       pb.confirmed_by AS confirmed_by, pb.lesson AS lesson, pb.learned_at AS learned_at, pb.helped AS helped, pb.corrected_from AS corrected_from, pb.corrected_also AS corrected_also, c.name AS candidate, c.client = true AS client, o.name AS pinned_to,
       [n IN nodes(p) | n.name] AS path, length(p) AS hops, 2 AS source
