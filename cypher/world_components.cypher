// Every component with what an import compares against (report: new, changed, world wins) and
// the names alerts and metrics may use for it (discovery maps service names through them), and
// the sources that reported it (an import warns when it merges into another source's component).
MATCH (c:Component)
RETURN c.name AS name, c.kind AS kind, c.tech AS tech, coalesce(c.declared, false) AS declared,
       coalesce(c.aliases, []) AS aliases, coalesce(c.sources, []) AS sources
