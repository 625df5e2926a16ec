// Remove the memberships $source said before and does not say now ($keep: 'person|team' keys),
// as drop_owners does for ownership: the source leaves MEMBER_OF's `sources`; with none left
// the membership is deleted (the Person is kept). Unsourced memberships of a team in $adopt
// count as said by $source. Returns each membership $source said before, `gone` when deleted.
MATCH (p:Person)-[r:MEMBER_OF]->(tm:Team)
WHERE ($source IN coalesce(r.sources, []) OR (r.sources IS NULL AND tm.name IN $adopt))
  AND NOT (p.name + '|' + tm.name) IN $keep
WITH p, r, tm, [s IN coalesce(r.sources, []) WHERE s <> $source] AS rest
SET r.sources = rest
// FOREACH, not WHERE: FalkorDB lost the SET of the rows a later WHERE filtered out
WITH p.name AS person, tm.name AS team, r, size(rest) = 0 AS gone
FOREACH (_ IN CASE WHEN gone THEN [1] ELSE [] END | DELETE r)
RETURN person, team, gone
ORDER BY person, team
