// Which of $components a root cause explains: a business dependency path within $hops (0-6)
// joins the component and $cause, either way (the component depends on the cause, or the cause
// sends it traffic / changed upstream of it). A component with no such path is another failure.
MATCH p = (a:Component)-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..6]->(c:Component {name: $cause})
WHERE a.name IN $components AND length(p) <= $hops AND all(r IN relationships(p) WHERE r.purpose = 'business')
RETURN DISTINCT a.name AS name
UNION
MATCH p = (c:Component {name: $cause})-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*1..6]->(a:Component)
WHERE a.name IN $components AND length(p) <= $hops AND all(r IN relationships(p) WHERE r.purpose = 'business')
RETURN DISTINCT a.name AS name
