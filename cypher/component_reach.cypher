// Components reachable from $component along business dependency edges within $hops (max 6):
// the alert's correlation reach. Two alerts correlate when their reaches overlap, i.e. one
// depends on the other or both depend on a common component. Telemetry and config edges skipped.
MATCH p = (c:Component {name: $component})-[:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON*0..6]->(d:Component)
WHERE length(p) <= $hops AND all(r IN relationships(p) WHERE r.purpose = 'business' AND r.retired_at IS NULL)
RETURN collect(DISTINCT d.name) AS near
