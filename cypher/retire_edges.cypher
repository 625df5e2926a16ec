// Retire the edges $source reported before but not in this import ($keep: 'from|TYPE|to' keys):
// the source is removed from the edge's `sources`; an edge no source reports any more gets
// `retired_at` (ms) and is kept, never deleted; walks skip it (`r.retired_at IS NULL`). An edge
// seen after $now (ms; a backfill's past time) is left alone: older evidence never retires it.
MATCH (a:Component)-[r:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON]->(b:Component)
WHERE $source IN coalesce(r.sources, []) AND NOT (a.name + '|' + type(r) + '|' + b.name) IN $keep
  AND coalesce(r.last_seen, 0) <= $now
WITH a, r, b, [s IN r.sources WHERE s <> $source] AS rest
SET r.sources = rest,
    r.retired_at = CASE WHEN size(rest) = 0 THEN coalesce(r.retired_at, $now) ELSE r.retired_at END
WITH collect({from: a.name, type: type(r), to: b.name, retired: size(rest) = 0}) AS retiring
// @include _topology_changed
WITH retiring
UNWIND retiring AS e
RETURN e.from AS from, e.type AS type, e.to AS to, e.retired AS retired
