// Which of the candidate names (from alert labels) are known components, by name or alias.
MATCH (c:Component)
WHERE c.name IN $candidates OR any(x IN c.aliases WHERE x IN $candidates)
RETURN c.name AS name, c.aliases AS aliases
