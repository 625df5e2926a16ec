// What an investigation reads before it decides, in one round trip, as lists of
// maps: `alerts` (the incident's alerts, `incident_alerts`' columns the investigator uses),
// `walk` (`coverage_walk` rows from the alerting components within $hops, each with `paths`:
// one shortest path from each component it covers, as walk_path.cypher finds), `links`
// (`topic_producers` of the topics that walk reaches), `beyond` (`coverage_walk` rows from
// those producers), `changes` (`recent_changes` of every component alerting or reached, in
// [opened - $lookback_ms, opened], `opened` being the first alert's start) and `recalled`
// (`recall` rows: the same four sources as recall.cypher; keep the two in step) and `near`
// (`neighbours` rows of every alerting component, `of` naming it). The tools read
// these instead of asking the graph again (agents/investigate/tools/prefetch.py). Lists come unordered.
// Read only; every part is a subquery that returns one row (collect), so an empty part is [].
// Every walk starts from components looked up by name (UNWIND, then the name index): a
// `WHERE a.name IN list` scanned the whole world (tests/test_query_plans.py).
MATCH (i:Incident {id: $incident_id})
CALL {
  WITH i
  OPTIONAL MATCH (i)-[:HAS_ALERT]->(a:Alert)
  OPTIONAL MATCH (a)-[:ON]->(c:Component)
  RETURN collect(CASE WHEN a IS NULL THEN null ELSE {
       key: a.key, alertname: a.alertname, component: c.name, starts_at_ms: a.starts_at_ms,
       status: a.status, annotations_json: a.annotations_json, labels_json: a.labels_json} END)
       AS alerts, collect(DISTINCT c.name) AS alerting, min(a.starts_at_ms) AS opened
}
CALL {
  WITH alerting
  CALL {
    WITH alerting
    UNWIND alerting AS alerting_name
    MATCH (a:Component {name: alerting_name})
    WITH a  // walk from it: else the planner may walk from every component
    MATCH p = (a)-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..6]->(c:Component)
    WHERE all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL) AND length(p) <= $hops
    WITH c, a, collect([n IN nodes(p) | n.name]) AS found
    WITH c, a, reduce(best = null, q IN found |
           CASE WHEN best IS NULL OR size(q) < size(best) THEN q ELSE best END) AS path
    RETURN c.name AS name, c.kind AS kind, c.client AS client, collect(a.name) AS covers,
           collect(size(path) - 1) AS depths, collect(path) AS paths
  }
  RETURN collect({name: name, kind: kind, client: client, covers: covers, depths: depths,
                  paths: paths}) AS walk
}
CALL {
  WITH walk
  CALL {
    WITH walk
    UNWIND [w IN walk WHERE w.kind = 'topic' | w.name] AS topic
    MATCH (t:Component {name: topic})
    MATCH (pr:Component)-[r:PUBLISHES]->(t)
    WHERE r.purpose = 'business'
    RETURN t.name AS topic, pr.name AS producer
  }
  RETURN collect({topic: topic, producer: producer}) AS links
}
CALL {
  WITH links
  CALL {
    WITH links
    UNWIND [l IN links | l.producer] AS producer
    MATCH (a:Component {name: producer})
    WITH a
    MATCH p = (a)-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..6]->(c:Component)
    WHERE all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL) AND length(p) <= $hops
    WITH c, a, min(length(p)) AS depth
    RETURN c.name AS name, c.kind AS kind, c.client AS client, collect(a.name) AS covers,
           collect(depth) AS depths
  }
  RETURN collect({name: name, kind: kind, client: client, covers: covers, depths: depths}) AS beyond
}
CALL {
  WITH alerting, walk, beyond, opened
  CALL {
    WITH alerting, walk, beyond, opened
    MATCH (ch:Change)-[:MODIFIES]->(c:Component)
    WHERE c.name IN alerting + [w IN walk | w.name] + [w IN beyond | w.name]
      AND ch.at >= opened - $lookback_ms AND ch.at <= opened
    RETURN ch.id AS id, c.name AS component, ch.kind AS kind, ch.ref AS ref, ch.at AS at,
           ch.author AS author
  }
  RETURN collect({id: id, component: component, kind: kind, ref: ref, at: at, author: author})
         AS changes
}
CALL {
  WITH alerting
  CALL {
    WITH alerting
    UNWIND alerting AS alerting_name
    MATCH (a:Component {name: alerting_name})
    WITH a  // walk from it: else the planner may walk from every component
    MATCH p = (a)-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..2]->(c:Component)
    WHERE all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
    MATCH (pb:Playbook {status: 'active'})-[:PINNED_TO]->(c)
    RETURN pb.id AS id, pb.title AS title, pb.failure_kind AS failure_kind, pb.trust AS trust,
           pb.checks_json AS checks_json, pb.learned_from AS learned_from,
       pb.confirmed_by AS confirmed_by, pb.learned_at AS learned_at, c.name AS candidate, c.name AS pinned_to,
           [n IN nodes(p) | n.name] AS path, length(p) AS hops, 0 AS source
    UNION ALL
    WITH alerting
    UNWIND alerting AS alerting_name
    MATCH (a:Component {name: alerting_name})
    WITH a  // walk from it: else the planner may walk from every component
    MATCH p = (a)-[r:CALLS|READS_WRITES]->(c:Component)
    WHERE r.purpose = 'config'
    MATCH (pb:Playbook {status: 'active'})-[:PINNED_TO]->(c)
    RETURN pb.id AS id, pb.title AS title, pb.failure_kind AS failure_kind, pb.trust AS trust,
           pb.checks_json AS checks_json, pb.learned_from AS learned_from,
       pb.confirmed_by AS confirmed_by, pb.learned_at AS learned_at, c.name AS candidate, c.name AS pinned_to,
           [n IN nodes(p) | n.name] AS path, length(p) AS hops, 1 AS source
    UNION ALL
    WITH alerting
    UNWIND alerting AS alerting_name
    MATCH (a:Component {name: alerting_name})
    WITH a  // walk from it: else the planner may walk from every component
    MATCH p = (c:Component {client: true})-[:CALLS*1..3]->(a)
    WHERE all(r IN relationships(p) WHERE r.purpose = 'business')
    MATCH (pb:Playbook {status: 'active'})-[:PINNED_TO]->(c)
    RETURN pb.id AS id, pb.title AS title, pb.failure_kind AS failure_kind, pb.trust AS trust,
           pb.checks_json AS checks_json, pb.learned_from AS learned_from,
       pb.confirmed_by AS confirmed_by, pb.learned_at AS learned_at, c.name AS candidate, c.name AS pinned_to,
           [n IN reverse(nodes(p)) | n.name] AS path, length(p) AS hops, 1 AS source
    UNION ALL
    WITH alerting
    UNWIND alerting AS alerting_name
    MATCH (a:Component {name: alerting_name})
    WITH a  // walk from it: else the planner may walk from every component
    MATCH p = (a)-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..2]->(c:Component)
    WHERE c.tech IS NOT NULL AND all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
    MATCH (pb:Playbook {status: 'active'})-[:PINNED_TO]->(o:Component)
    WHERE o.tech = c.tech AND o <> c
    RETURN pb.id AS id, pb.title AS title, pb.failure_kind AS failure_kind, pb.trust AS trust,
           pb.checks_json AS checks_json, pb.learned_from AS learned_from,
       pb.confirmed_by AS confirmed_by, pb.learned_at AS learned_at, c.name AS candidate, o.name AS pinned_to,
           [n IN nodes(p) | n.name] AS path, length(p) AS hops, 2 AS source
  }
  RETURN collect({id: id, title: title, failure_kind: failure_kind, trust: trust,
                  checks_json: checks_json, learned_from: learned_from,
                  confirmed_by: confirmed_by, learned_at: learned_at,
                  candidate: candidate, pinned_to: pinned_to,
                  path: path, hops: hops, source: source}) AS recalled
}
CALL {
  WITH alerting
  CALL {
    WITH alerting
    UNWIND alerting AS alerting_name
    MATCH (c:Component {name: alerting_name})-[r:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON]->(n:Component)
    RETURN c.name AS of, n.name AS name, n.kind AS kind, coalesce(n.client, false) AS client,
           type(r) AS edge, 'out' AS direction, r.purpose AS purpose, r.protocol AS protocol,
           r.propagation AS propagation, r.basis AS basis
    UNION ALL
    WITH alerting
    UNWIND alerting AS alerting_name
    MATCH (c:Component {name: alerting_name})
    MATCH (n:Component)-[r:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON]->(c)
    RETURN c.name AS of, n.name AS name, n.kind AS kind, coalesce(n.client, false) AS client,
           type(r) AS edge, 'in' AS direction, r.purpose AS purpose, r.protocol AS protocol,
           r.propagation AS propagation, r.basis AS basis
  }
  RETURN collect({of: of, name: name, kind: kind, client: client, edge: edge,
                  direction: direction, purpose: purpose, protocol: protocol,
                  propagation: propagation, basis: basis}) AS near
}
RETURN alerts, alerting, opened, walk, links, beyond, changes, recalled, near
