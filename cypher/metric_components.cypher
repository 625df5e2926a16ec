// Which of the candidate names (metric label values: service names, hostnames) are known
// components, by name or alias (the same mapping as alert labels).
MATCH (c:Component)
WHERE c.name IN $candidates OR any(x IN c.aliases WHERE x IN $candidates)
RETURN c.name AS name, c.aliases AS aliases, coalesce(c.client, false) AS client
