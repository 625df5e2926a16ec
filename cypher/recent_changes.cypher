// Changes (deploys, merged PRs) to the given components in [$since, $until] (ms, UTC).
MATCH (ch:Change)-[:MODIFIES]->(c:Component)
WHERE c.name IN $components AND ch.at >= $since AND ch.at <= $until
RETURN ch.id AS id, c.name AS component, ch.kind AS kind, ch.ref AS ref, ch.at AS at,
       ch.author AS author
ORDER BY ch.at DESC
