// Remove the memberships $source said before and does not say now ($keep: 'person|team' keys),
// as drop_owners does for ownership: the source leaves MEMBER_OF's `sources`; with none left
// the membership is deleted (the Person is kept). Unsourced memberships of a team in $adopt
// count as said by $source. Returns each deleted membership.
MATCH (p:Person)-[r:MEMBER_OF]->(tm:Team)
WHERE ($source IN coalesce(r.sources, []) OR (r.sources IS NULL AND tm.name IN $adopt))
  AND NOT (p.name + '|' + tm.name) IN $keep
WITH p, r, tm, [s IN coalesce(r.sources, []) WHERE s <> $source] AS rest
SET r.sources = rest
WITH p, r, tm, rest
WHERE size(rest) = 0
WITH p.name AS person, tm.name AS team, r
DELETE r
RETURN person, team
ORDER BY person, team
