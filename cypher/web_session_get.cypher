// The web session with this id (sha256 of the cookie's secret) unless it expired by the
// database clock; none once signed out (the node is deleted then).
MATCH (s:WebSession {id: $id})
WHERE s.expires_at > timestamp()
RETURN s.person AS person, s.via AS via, s.expires_at AS expires_at
