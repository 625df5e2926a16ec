// Create or update components (topology import); never deletes. Provenance: every source that
// reported a component is in `sources`, `last_seen` is the latest import time (ms). A component an
// explicit world file declared keeps the world file's kind, tech, client flag, criticality and
// aliases when another source reports it (the world file wins; the import report says so).
UNWIND $components AS row
MERGE (c:Component {name: row.name})
WITH c, row, coalesce(c.declared, false) AND NOT row.declared AS keep
SET c.kind = CASE WHEN keep THEN c.kind ELSE row.kind END,
    c.tech = CASE WHEN keep THEN c.tech ELSE coalesce(row.tech, c.tech) END,
    c.client = CASE WHEN keep THEN c.client ELSE row.client END,
    c.aliases = CASE WHEN keep THEN c.aliases ELSE row.aliases END,
    c.criticality = CASE WHEN keep THEN c.criticality ELSE coalesce(row.criticality, c.criticality) END,
    c.paths = CASE WHEN size(row.paths) > 0 THEN row.paths ELSE c.paths END,
    c.annotations_json = coalesce(row.annotations_json, c.annotations_json),
    c.source = CASE WHEN keep THEN c.source ELSE row.source END,
    c.sources = CASE WHEN row.source IN coalesce(c.sources, []) THEN c.sources
                     ELSE coalesce(c.sources, []) + [row.source] END,
    c.declared = coalesce(c.declared, false) OR row.declared,
    c.last_seen = CASE WHEN c.last_seen > $now THEN c.last_seen ELSE $now END
WITH count(c) AS components
// @include _topology_changed
RETURN components
