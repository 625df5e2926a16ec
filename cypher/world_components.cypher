// Every component with what an import compares against (report: new, changed, world wins).
MATCH (c:Component)
RETURN c.name AS name, c.kind AS kind, c.tech AS tech, coalesce(c.declared, false) AS declared
