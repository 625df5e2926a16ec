// What an investigation reads before it decides, in one round trip, for each incident of
// $incident_ids (a worker's batch: agents/tasks/worker.py), one row each with its `incident_id`
// (none for an incident that is gone), as lists of maps: `alerts` (the incident's alerts, `incident_alerts`' columns the investigator uses),
// `walk` (`coverage_walk` rows from the alerting components within $hops, each with `paths`:
// one shortest path from each component it covers, as walk_path.cypher finds), `links`
// (`topic_producers` of the topics that walk reaches, with their consumers), `beyond` (`coverage_walk` rows from
// those producers), `changes` (`recent_changes` of every component alerting or reached, in
// [opened - $lookback_ms, opened], `opened` being the first alert's start), `change_source`
// (whether any change was ever recorded: without one, no `changes` measured nothing), `remembered`
// (whether memory holds an active playbook: only then is `recall` asked, in a query of its
// own, so an investigation with nothing to recall does not carry its four walks) and `near`
// (`neighbours` rows of every alerting component, `of` naming it). The tools read
// these instead of asking the graph again (agents/investigate/tools/prefetch.py). Lists come unordered.
// Read only; every part is a subquery that returns one row, so an empty part is [].
// Every walk starts from components looked up by name (UNWIND, then the name index): a
// `WHERE a.name IN list` scanned the whole world (tests/test_query_plans.py).
UNWIND $incident_ids AS incident_id
MATCH (i:Incident {id: incident_id})
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
    RETURN t.name AS topic, pr.name AS producer,
           [(co:Component)-[k:CONSUMES]->(t) WHERE k.purpose = 'business' | co.name] AS consumers
  }
  RETURN collect({topic: topic, producer: producer, consumers: consumers}) AS links
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
// @include _change_source
CALL {
  MATCH (pb:Playbook {status: 'active'})
  WITH pb LIMIT 1
  RETURN count(pb) > 0 AS remembered
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
RETURN i.id AS incident_id, alerts, alerting, opened, walk, links, beyond, changes,
       change_source, remembered, near
