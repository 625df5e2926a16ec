// One verdict (recorded from Slack) with the incident's finding at the time of learning.
MATCH (i:Incident)-[:HAS_VERDICT]->(v:Verdict {id: $verdict_id})
OPTIONAL MATCH (i)-[:HAS_FINDING]->(f:Finding)
RETURN v.id AS id, v.verdict AS verdict, v.actual_cause AS actual_cause, v.by AS by,
       v.at AS at, v.text AS text, i.id AS incident_id, i.root_cause AS root_cause,
       f.id AS finding_id, f.planner AS planner, f.evidence_json AS evidence_json
