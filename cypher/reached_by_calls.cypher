// For each component of $sources, one shortest way the calls of $candidate reach it
// (checks.py: `explains_alerting` with `via: calls`, a lesson that named a caller of what
// alerted): the candidate's business calls down to the source itself (0-4 hops), else down to
// a component the source depends on too (the candidate's calls or publishes 1-2 hops, the
// source's dependency walk 1-3 hops): a batch that floods or locks a database its other callers
// wait on, a producer whose topic the source consumes (positions that stop or arrive wrong).
// `path` runs from the source to the candidate (through the shared component); null when none.
UNWIND $sources AS s
OPTIONAL MATCH q = (:Component {name: $candidate})-[:CALLS|READS_WRITES*0..4]->(:Component {name: s})
WHERE all(r IN relationships(q) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
WITH s, q ORDER BY length(q)
WITH s, collect(reverse([n IN nodes(q) | n.name]))[0] AS direct
OPTIONAL MATCH a = (:Component {name: $candidate})-[:CALLS|READS_WRITES|PUBLISHES*1..2]->(d:Component),
               b = (:Component {name: s})-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*1..3]->(d)
WHERE direct IS NULL
  AND all(r IN relationships(a) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
  AND all(r IN relationships(b) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
WITH s, direct, a, b ORDER BY length(a) + length(b)
WITH s, direct, collect([n IN nodes(b) | n.name] + reverse([n IN nodes(a) | n.name])[1..])[0] AS shared
RETURN s AS source, coalesce(direct, shared) AS path
