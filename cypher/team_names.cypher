// Every team of the tenant graph, by name.
MATCH (tm:Team)
RETURN tm.name AS name
ORDER BY name
