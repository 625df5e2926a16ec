// Which of the alerting components reach $cause along business edges of which none is only a
// compose `depends_on` (start order, not calls): the alerting components the world knows
// call into $cause, directly or through others, within $hops.
MATCH (a:Component) WHERE a.name IN $alerting
MATCH p = (a)-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..6]->(c:Component {name: $cause})
WHERE length(p) <= $hops
  AND all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL
          AND coalesce(r.basis, '') <> 'depends_on')
RETURN DISTINCT a.name AS name
