// For each component of $sources, one shortest dependency path between it and $candidate
// (checks.py: a playbook's candidate must explain the alerting components): a business or
// configuration walk from the source down to the candidate (0-6 hops), else, for a traffic
// source, the candidate's calls through to the source (1-4 hops). `path` is null when neither exists.
// `hosted`: the walk's last hop is HOSTED_ON (the source reaches the candidate through
// something it hosts, a topic on its broker), false otherwise.
UNWIND $sources AS s
OPTIONAL MATCH p = (:Component {name: s})-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..6]->(:Component {name: $candidate})
WHERE all(r IN relationships(p) WHERE r.purpose IN ['business', 'config'] AND r.retired_at IS NULL)
WITH s, p ORDER BY length(p)
WITH s, collect([[n IN nodes(p) | n.name], any(r IN relationships(p)[-1..] WHERE type(r) = 'HOSTED_ON')])[0] AS best
WITH s, best[0] AS down, coalesce(best[1], false) AS hosted
OPTIONAL MATCH q = (:Component {name: $candidate, client: true})-[:CALLS|READS_WRITES*1..4]->(:Component {name: s})
WHERE down IS NULL AND all(r IN relationships(q) WHERE r.purpose = 'business')
WITH s, down, hosted, q ORDER BY length(q)
WITH s, down, hosted, collect([n IN nodes(q) | n.name])[0] AS up
RETURN s AS source, coalesce(down, up) AS path, hosted AND down IS NOT NULL AS hosted
