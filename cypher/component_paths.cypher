// Components with repository paths (CODEOWNERS style), to map a changed file to components.
MATCH (c:Component) WHERE c.paths IS NOT NULL AND size(c.paths) > 0
RETURN c.name AS name, c.paths AS paths
ORDER BY name
