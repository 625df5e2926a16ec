// Remove $source from the teams it said before and does not say now ($keep: team names); a
// team no source says any more is deleted with its on-call shifts and its OWNS and MEMBER_OF
// edges (a team that is gone must not be paged). Teams without `sources` (imported before
// they were kept) are left alone: no source can say it dropped them.
MATCH (tm:Team)
WHERE $source IN coalesce(tm.sources, []) AND NOT tm.name IN $keep
WITH tm, [s IN tm.sources WHERE s <> $source] AS rest
SET tm.sources = rest
WITH tm, rest
WHERE size(rest) = 0
OPTIONAL MATCH (tm)-[:OWNS]->(c:Component)
WITH tm, collect(c.name) AS owned
OPTIONAL MATCH (sh:OnCallShift)-[:FOR_TEAM]->(tm)
WITH tm, tm.name AS team, owned, collect(sh) AS shifts
WITH tm, team, owned, shifts, size(shifts) AS shift_count
FOREACH (sh IN shifts | DETACH DELETE sh)
DETACH DELETE tm
RETURN team, owned, shift_count
ORDER BY team
