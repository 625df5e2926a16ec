// Remove $source from the teams it said before and does not say now ($keep: team names); a
// team no source says any more is deleted with its on-call shifts and its OWNS and MEMBER_OF
// edges (a team that is gone must not be paged). Teams without `sources` (imported before
// they were kept) are left alone: no source can say it dropped them. Returns each team
// $source said before, `gone` when deleted, with what it still owned and its shift count.
MATCH (tm:Team)
WHERE $source IN coalesce(tm.sources, []) AND NOT tm.name IN $keep
WITH tm, [s IN tm.sources WHERE s <> $source] AS rest
SET tm.sources = rest
// FOREACH, not WHERE: FalkorDB lost the SET of the rows a later WHERE filtered out
WITH tm, size(rest) = 0 AS gone
OPTIONAL MATCH (tm)-[:OWNS]->(c:Component)
WITH tm, gone, collect(c.name) AS owned
OPTIONAL MATCH (sh:OnCallShift)-[:FOR_TEAM]->(tm)
WITH tm, tm.name AS team, gone, owned, collect(sh) AS shifts
FOREACH (sh IN CASE WHEN gone THEN shifts ELSE [] END | DETACH DELETE sh)
FOREACH (_ IN CASE WHEN gone THEN [1] ELSE [] END | DETACH DELETE tm)
RETURN team, gone, owned, size(shifts) AS shift_count
ORDER BY team
