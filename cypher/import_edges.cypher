// Create or update typed dependency edges, caller -> callee (dependent -> dependency), with
// provenance: `sources` (every source reporting it), `last_seen` (ms), `rate` (calls/s, when
// discovered), `basis` (what the source saw: declared, environment, depends_on, catalog, traced;
// compose `depends_on` is start order, the weakest, and never replaces a stronger basis).
// Seeing an edge again un-retires it. An import stamped before what the edge last saw (a
// discovery backfill, `--at` a past time) keeps the newer `last_seen`, rate and retirement. Attributes a world file declared win over
// other sources' (the explicit world file wins).
UNWIND $edges AS e
MATCH (a:Component {name: e.from}), (b:Component {name: e.to})
FOREACH (_ IN CASE WHEN e.type = 'CALLS' THEN [1] ELSE [] END |
  MERGE (a)-[r:CALLS]->(b)
  SET r.protocol = CASE WHEN r.declared AND NOT e.declared THEN r.protocol ELSE coalesce(e.protocol, r.protocol) END,
      r.purpose = CASE WHEN r.declared AND NOT e.declared THEN r.purpose ELSE e.purpose END,
      r.propagation = CASE WHEN r.declared AND NOT e.declared THEN r.propagation ELSE coalesce(e.propagation, r.propagation) END,
      r.rate = CASE WHEN coalesce(r.last_seen, 0) > $now THEN coalesce(r.rate, e.rate) ELSE coalesce(e.rate, r.rate) END,
      r.basis = CASE WHEN e.basis = 'depends_on' AND coalesce(r.basis, 'depends_on') <> 'depends_on' THEN r.basis ELSE e.basis END,
      r.sources = CASE WHEN e.origin IN coalesce(r.sources, []) THEN r.sources ELSE coalesce(r.sources, []) + [e.origin] END,
      r.declared = coalesce(r.declared, false) OR e.declared,
      r.retired_at = CASE WHEN r.retired_at > $now THEN r.retired_at ELSE null END,
      r.last_seen = CASE WHEN r.last_seen > $now THEN r.last_seen ELSE $now END)
FOREACH (_ IN CASE WHEN e.type = 'READS_WRITES' THEN [1] ELSE [] END |
  MERGE (a)-[r:READS_WRITES]->(b)
  SET r.protocol = CASE WHEN r.declared AND NOT e.declared THEN r.protocol ELSE coalesce(e.protocol, r.protocol) END,
      r.purpose = CASE WHEN r.declared AND NOT e.declared THEN r.purpose ELSE e.purpose END,
      r.propagation = CASE WHEN r.declared AND NOT e.declared THEN r.propagation ELSE coalesce(e.propagation, r.propagation) END,
      r.rate = CASE WHEN coalesce(r.last_seen, 0) > $now THEN coalesce(r.rate, e.rate) ELSE coalesce(e.rate, r.rate) END,
      r.basis = CASE WHEN e.basis = 'depends_on' AND coalesce(r.basis, 'depends_on') <> 'depends_on' THEN r.basis ELSE e.basis END,
      r.sources = CASE WHEN e.origin IN coalesce(r.sources, []) THEN r.sources ELSE coalesce(r.sources, []) + [e.origin] END,
      r.declared = coalesce(r.declared, false) OR e.declared,
      r.retired_at = CASE WHEN r.retired_at > $now THEN r.retired_at ELSE null END,
      r.last_seen = CASE WHEN r.last_seen > $now THEN r.last_seen ELSE $now END)
FOREACH (_ IN CASE WHEN e.type = 'PUBLISHES' THEN [1] ELSE [] END |
  MERGE (a)-[r:PUBLISHES]->(b)
  SET r.protocol = CASE WHEN r.declared AND NOT e.declared THEN r.protocol ELSE coalesce(e.protocol, r.protocol) END,
      r.purpose = CASE WHEN r.declared AND NOT e.declared THEN r.purpose ELSE e.purpose END,
      r.propagation = CASE WHEN r.declared AND NOT e.declared THEN r.propagation ELSE coalesce(e.propagation, r.propagation) END,
      r.rate = CASE WHEN coalesce(r.last_seen, 0) > $now THEN coalesce(r.rate, e.rate) ELSE coalesce(e.rate, r.rate) END,
      r.basis = CASE WHEN e.basis = 'depends_on' AND coalesce(r.basis, 'depends_on') <> 'depends_on' THEN r.basis ELSE e.basis END,
      r.sources = CASE WHEN e.origin IN coalesce(r.sources, []) THEN r.sources ELSE coalesce(r.sources, []) + [e.origin] END,
      r.declared = coalesce(r.declared, false) OR e.declared,
      r.retired_at = CASE WHEN r.retired_at > $now THEN r.retired_at ELSE null END,
      r.last_seen = CASE WHEN r.last_seen > $now THEN r.last_seen ELSE $now END)
FOREACH (_ IN CASE WHEN e.type = 'CONSUMES' THEN [1] ELSE [] END |
  MERGE (a)-[r:CONSUMES]->(b)
  SET r.protocol = CASE WHEN r.declared AND NOT e.declared THEN r.protocol ELSE coalesce(e.protocol, r.protocol) END,
      r.purpose = CASE WHEN r.declared AND NOT e.declared THEN r.purpose ELSE e.purpose END,
      r.propagation = CASE WHEN r.declared AND NOT e.declared THEN r.propagation ELSE coalesce(e.propagation, r.propagation) END,
      r.rate = CASE WHEN coalesce(r.last_seen, 0) > $now THEN coalesce(r.rate, e.rate) ELSE coalesce(e.rate, r.rate) END,
      r.basis = CASE WHEN e.basis = 'depends_on' AND coalesce(r.basis, 'depends_on') <> 'depends_on' THEN r.basis ELSE e.basis END,
      r.sources = CASE WHEN e.origin IN coalesce(r.sources, []) THEN r.sources ELSE coalesce(r.sources, []) + [e.origin] END,
      r.declared = coalesce(r.declared, false) OR e.declared,
      r.retired_at = CASE WHEN r.retired_at > $now THEN r.retired_at ELSE null END,
      r.last_seen = CASE WHEN r.last_seen > $now THEN r.last_seen ELSE $now END)
FOREACH (_ IN CASE WHEN e.type = 'HOSTED_ON' THEN [1] ELSE [] END |
  MERGE (a)-[r:HOSTED_ON]->(b)
  SET r.protocol = CASE WHEN r.declared AND NOT e.declared THEN r.protocol ELSE coalesce(e.protocol, r.protocol) END,
      r.purpose = CASE WHEN r.declared AND NOT e.declared THEN r.purpose ELSE e.purpose END,
      r.propagation = CASE WHEN r.declared AND NOT e.declared THEN r.propagation ELSE coalesce(e.propagation, r.propagation) END,
      r.rate = CASE WHEN coalesce(r.last_seen, 0) > $now THEN coalesce(r.rate, e.rate) ELSE coalesce(e.rate, r.rate) END,
      r.basis = CASE WHEN e.basis = 'depends_on' AND coalesce(r.basis, 'depends_on') <> 'depends_on' THEN r.basis ELSE e.basis END,
      r.sources = CASE WHEN e.origin IN coalesce(r.sources, []) THEN r.sources ELSE coalesce(r.sources, []) + [e.origin] END,
      r.declared = coalesce(r.declared, false) OR e.declared,
      r.retired_at = CASE WHEN r.retired_at > $now THEN r.retired_at ELSE null END,
      r.last_seen = CASE WHEN r.last_seen > $now THEN r.last_seen ELSE $now END)
WITH count(e) AS edges
// @include _topology_changed
RETURN edges
