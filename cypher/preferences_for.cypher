// A person's approved, current (not superseded) preferences for a failure kind or for all ('*').
MATCH (f:Fact {kind: 'preference', status: 'approved'})
WHERE f.person IN $people AND f.failure_kind IN [$failure_kind, '*']
  AND NOT (f)<-[:SUPERSEDES]-(:Fact)
RETURN f.id AS id, f.person AS person, f.failure_kind AS failure_kind, f.no_page AS no_page,
       f.ticket AS ticket, f.detail AS detail, f.text AS text, f.stated_at AS stated_at,
       f.approved_at AS approved_at
ORDER BY f.approved_at DESC
