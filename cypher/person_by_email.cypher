// The name of the person whose email this is (world file `email`, compared without case), or
// no row. People are as many as the organisation has (tens to hundreds): no index.
MATCH (p:Person)
WHERE toLower(p.email) = toLower($email)
RETURN p.name AS name
ORDER BY p.name
LIMIT 1
