// Every preference (Fact) with the version it supersedes, newest first.
MATCH (f:Fact)
OPTIONAL MATCH (f)-[:SUPERSEDES]->(old:Fact)
RETURN f.id AS id, f.status AS status, f.person AS person, f.person_name AS person_name,
       f.failure_kind AS failure_kind, f.no_page AS no_page, f.ticket AS ticket,
       f.detail AS detail, f.text AS text, f.stated_at AS stated_at,
       f.approved_at AS approved_at, collect(old.id) AS supersedes
ORDER BY stated_at DESC, id
