// What memory did for an incident (the API's `similar` and `memory`): the similar incidents
// found when it was investigated (JSON) and, for its latest Decision, each playbook considered
// with where it was learned, who confirmed or corrected that (`lesson`), its trust at use, each check's observed
// result, whether it steered, and the verdict the use got later.
MATCH (i:Incident {id: $incident_id})
OPTIONAL MATCH (i)-[:HAS_DECISION]->(d:Decision)
WITH i, d ORDER BY d.at DESC LIMIT 1
OPTIONAL MATCH (d)-[u:USED]->(pb:Playbook)
WITH i, d, u, pb ORDER BY u.weight DESC, pb.id
RETURN i.similar_json AS similar_json, d.planner AS planner,
       collect(CASE WHEN pb IS NULL THEN NULL ELSE
         {playbook: pb.id, title: pb.title, status: pb.status, candidate: u.candidate,
          path: u.path, learned_from: pb.learned_from, confirmed_by: pb.confirmed_by,
          lesson: pb.lesson,
          trust_at_use: u.trust_at_use, checks_json: u.checks_json, applicable: u.applicable,
          steered: u.steered, verdict: u.verdict} END) AS used
