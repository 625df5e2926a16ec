// Every component's name and aliases: what a misspelt cause is compared with
// (`agents/learn/verdicts.py`, `close_names`), read only when a verdict names an unknown one.
MATCH (c:Component)
RETURN c.name AS name, coalesce(c.aliases, []) AS aliases
