// Open a web session: its id is the sha256 of the cookie's secret, so the graph alone opens
// nothing. $expires_at is ms UTC. Sessions that expired are deleted here (at most 100 at a
// time), so sign-ins keep the set small without a sweeper.
CREATE (s:WebSession {id: $id, person: $person, via: $via, created_at: timestamp(),
                      expires_at: $expires_at})
WITH s
OPTIONAL MATCH (old:WebSession) WHERE old.expires_at < timestamp()
WITH s, collect(old)[..100] AS expired
FOREACH (o IN expired | DELETE o)
RETURN s.id AS id
