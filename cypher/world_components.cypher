// Every component with what an import compares against (report: new, changed, world wins) and
// the names alerts and metrics may use for it (discovery maps service names through them).
MATCH (c:Component)
RETURN c.name AS name, c.kind AS kind, c.tech AS tech, coalesce(c.declared, false) AS declared,
       coalesce(c.aliases, []) AS aliases
