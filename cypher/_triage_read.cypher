// A fragment, not a query: what triage reads before it writes a delivery (triage_context.cypher
// says what each part is; triage_lone.cypher reads the same and may write in the same query).
// Binds topology, matched, grouped, links, known, open, refired and episodes, one row.
// The topology a caller remembers (agents/triage/link_cache.py) is not read again: when the
// graph's (:Topology) version is still $topology, only the candidates in $fresh are matched
// and the origins in $walked are not walked (their rows are the caller's); else every one.
CALL {
  OPTIONAL MATCH (v:Topology)
  RETURN v.version AS topology, coalesce(v.version = $topology, false) AS cached
}
CALL {
  WITH cached
  CALL {
    WITH cached
    UNWIND CASE WHEN cached THEN $fresh ELSE $candidates END AS candidate
    MATCH (c:Component {name: candidate})
    RETURN candidate, c
    UNION
    WITH cached
    UNWIND CASE WHEN cached THEN $fresh ELSE $candidates END AS candidate
    MATCH (c:Component) WHERE candidate IN c.aliases
    RETURN candidate, c
  }
  RETURN collect({candidate: candidate, name: c.name, aliases: c.aliases}) AS matched
}
CALL {
  UNWIND $group_keys AS g
  MATCH (i:Incident) WHERE g IN i.group_keys AND i.status = 'open'  // the group_keys index
  MATCH (i)-[:HAS_ALERT]->(a:Alert) WHERE a.component IS NOT NULL
  RETURN collect(DISTINCT a.component) AS grouped
}
CALL {  // a component both matched and grouped is walked once (its rows would repeat)
  WITH cached, matched, grouped
  CALL {
    WITH cached, matched, grouped
    UNWIND [m IN matched | m.name] + [g IN grouped WHERE NOT g IN [m IN matched | m.name]] AS o
    WITH DISTINCT o AS origin, cached WHERE NOT (cached AND origin IN $walked)
    MATCH (c:Component {name: origin})
    MATCH p = (c)-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..6]->(d:Component)
    WHERE length(p) <= $hops AND all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
    RETURN origin, d.name AS name, [n IN nodes(p) | n.name] AS path, length(p) AS hops, 'down' AS way
    UNION ALL
    WITH cached, matched, grouped
    UNWIND [m IN matched | m.name] + [g IN grouped WHERE NOT g IN [m IN matched | m.name]] AS o
    WITH DISTINCT o AS origin, cached WHERE NOT (cached AND origin IN $walked)
    MATCH (c:Component {name: origin})
    WITH origin, c  // else the planner walks from every component towards c
    MATCH p = (c)<-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*1..6]-(d:Component)
    WHERE length(p) <= $hops AND all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
    RETURN origin, d.name AS name, [n IN reverse(nodes(p)) | n.name] AS path, length(p) AS hops, 'up' AS way
  }
  RETURN collect({origin: origin, name: name, path: path, hops: hops, way: way}) AS links
}
CALL {
  UNWIND $keys AS k
  MATCH (a:Alert {key: k})
  RETURN collect(a.key) AS known
}
CALL {
  OPTIONAL MATCH (i:Incident {status: 'open'}) WHERE i.opened_at >= $lo AND i.opened_at <= $hi
  WITH i ORDER BY i.id
  RETURN collect(CASE WHEN i IS NULL THEN null ELSE
    [i.id, i.opened_at, i.components, i.group_keys, coalesce(i.root_cause, '')] END) AS open
}
CALL {
  UNWIND $fingerprints AS f
  MATCH (a:Alert {fingerprint: f})
  RETURN collect(DISTINCT f) AS refired, collect(a.key) AS episodes
}
