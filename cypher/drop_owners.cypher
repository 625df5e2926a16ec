// Remove what $source said before about ownership and does not say now ($keep: 'team|component'
// keys): the source leaves the OWNS edge's `sources`; an edge no source says any more is
// deleted, so routing never sees a stale owner. An edge without `sources` (imported before
// they were kept) counts as said by $source when its team is in $adopt (the teams $source
// describes). Returns each edge $source said before, `gone` when deleted.
MATCH (tm:Team)-[r:OWNS]->(c:Component)
WHERE ($source IN coalesce(r.sources, []) OR (r.sources IS NULL AND tm.name IN $adopt))
  AND NOT (tm.name + '|' + c.name) IN $keep
WITH tm, r, c, [s IN coalesce(r.sources, []) WHERE s <> $source] AS rest
SET r.sources = rest
// FOREACH, not WHERE: FalkorDB lost the SET of the rows a later WHERE filtered out
WITH tm.name AS team, c.name AS component, r, size(rest) = 0 AS gone
FOREACH (_ IN CASE WHEN gone THEN [1] ELSE [] END | DELETE r)
RETURN team, component, gone
ORDER BY team, component
