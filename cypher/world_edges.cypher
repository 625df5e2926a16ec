// Every dependency edge with its provenance and discovered call rate (calls/s), for import
// reports and tests.
MATCH (a:Component)-[r:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON]->(b:Component)
RETURN a.name AS from, type(r) AS type, b.name AS to, r.sources AS sources,
       r.last_seen AS last_seen, r.retired_at AS retired_at, r.rate AS rate
