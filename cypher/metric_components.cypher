// Which of the candidate names (metric label values: service names, hostnames) are known
// components, by name or alias (the same mapping as alert labels).
// By name, then by alias, each through its index (a scan of every component, with an OR, was
// what one query cost before; tests/test_query_plans.py).
UNWIND $candidates AS candidate
MATCH (c:Component {name: candidate})
RETURN c.name AS name, c.aliases AS aliases, coalesce(c.client, false) AS client
UNION
UNWIND $candidates AS candidate
MATCH (c:Component) WHERE candidate IN c.aliases
RETURN c.name AS name, c.aliases AS aliases, coalesce(c.client, false) AS client
