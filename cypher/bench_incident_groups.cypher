// Tests and benchmarks only: every incident holding alerts, with its alerts' fingerprints, to
// compare how two graphs grouped the same alerts (incident ids differ between them).
MATCH (i:Incident)-[:HAS_ALERT]->(a:Alert)
RETURN i.status AS status, i.severity AS severity, i.firing AS firing,
       collect(a.fingerprint) AS fingerprints, i.components AS components
