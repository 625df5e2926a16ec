// bench/memory.py only: incidents $prefix<k> for k in $from..$to, the k-th resolved at
// $first_ms + k * $every_ms, each shaped like a real one-alert incident after triage, the
// agents and its resolve (counted on one run of the pipeline): one alert on component
// $component_prefix<k % $spread> carrying $labels_json / $annotations_json / $values_json /
// $generator_url; a finding ($summary, $paths_json, $ruled_out_json); a done investigate task,
// respond task and cleared notice; one step per entry of $steps ({kind: 'investigate' |
// 'respond', tool, args, result}) with NEXT edges within its task and TOUCHED edges to the
// component and those it calls; one sent Action per entry of $actions ({key, kind}).
UNWIND range($from, $to) AS k
WITH k, $first_ms + k * $every_ms AS at
MATCH (c:Component {name: $component_prefix + toString(k % $spread)})
OPTIONAL MATCH (c)-[:CALLS]->(d:Component)
WITH k, at, c, collect(d) AS near
CREATE (i:Incident {id: $prefix + toString(k), status: 'resolved', severity: 'critical',
  severity_rank: 4, title: 'HighErrorRate', opened_at: at - 600000, received_at: at - 600000,
  resolved_at: at, group_keys: ['{}:{service="' + c.name + '"}'], firing: 0,
  components: [c.name], root_cause: c.name, conclusive: true, notified: true,
  notified_root_cause: c.name})
CREATE (a:Alert {key: toString(k) + '@' + toString(at - 600000), fingerprint: toString(k),
  alertname: 'HighErrorRate', severity: 'critical', status: 'resolved',
  starts_at: toString(at - 600000), starts_at_ms: at - 600000, ends_at_ms: at,
  labels_json: $labels_json, annotations_json: $annotations_json, values_json: $values_json,
  generator_url: $generator_url, link: $generator_url, group_key: '{}:{service="' + c.name + '"}',
  receiver: 'blast-radius', source: 'alertmanager', title: 'HighErrorRate',
  received_at: at - 600000, component: c.name})
CREATE (i)-[:HAS_ALERT {via: ''}]->(a), (a)-[:ON]->(c), (i)-[:ROOT_CAUSE]->(c),
  (i)-[:IMPACTED]->(c)
CREATE (i)-[:HAS_FINDING]->(f:Finding {id: 'finding:' + i.id, created_at: at - 599000,
  alerts_seen: 1, updated_at: at - 599000, root_cause: c.name, candidates: [c.name],
  confidence: 0.45, summary: $summary, conclusive: true, paths_json: $paths_json,
  ruled_out_json: $ruled_out_json, planner: 'rules', second_opinion_json: 'null',
  separated_by: 'services behind it do not alert', evidence_json: '[]'})-[:SUPPORTED_BY]->(a)
CREATE (inv:Task {id: 'task-' + i.id, kind: 'investigate', status: 'done',
  owner: 'worker-1234-0', attempt_id: '8c19e846120e4b75aaaadfeffd095e56', epoch: 1, attempts: 1,
  lease_until: at - 570000, created_at: at - 600000, incident_id: i.id, taken_over: false,
  finished_at: at - 599000, outcome: 'conclusive'})-[:FOR]->(i)
CREATE (rsp:Task {id: 'respond:' + i.id, kind: 'respond', status: 'done',
  owner: 'worker-1234-0', attempt_id: '6145369378e0493a8bebfe2c52847417', epoch: 1,
  attempts: 1, lease_until: at - 570000, created_at: at - 599000, incident_id: i.id,
  taken_over: false, finished_at: at - 598000, outcome: 'notified'})-[:FOR]->(i)
CREATE (:Task {id: 'cleared:' + a.key, kind: 'notify_cleared', status: 'done',
  owner: 'worker-1234-1', attempt_id: '0b72c1eb38bf42beadd9e0d81309d8c5', epoch: 1,
  attempts: 1, lease_until: at + 30000, created_at: at, incident_id: i.id, alert_key: a.key,
  taken_over: false, finished_at: at + 1000, outcome: 'sent'})-[:FOR]->(i)
FOREACH (x IN $actions |
  CREATE (:Action {intent_id: 'incident:' + i.id + ':' + x.key, kind: x.kind,
    status: 'sent', attempt_id: '6145369378e0493a8bebfe2c52847417', adapter: 'slack',
    reserved_at: at, incident_id: i.id, external_ref: 'C012AB3CD:' + toString(at) + '.00' + x.key,
    updated_at: at})-[:FOR]->(i))
WITH i, c, near, inv, rsp, at
UNWIND range(0, size($steps) - 1) AS n
WITH c, near, at, $steps[n] AS x, n, CASE WHEN $steps[n].kind = 'respond' THEN rsp ELSE inv END AS t
CREATE (s:Step {task_id: t.id, n: n + 1, tool: x.tool, args: x.args, result: x.result,
  started_at: at - 599500, at: at - 599400, epoch: 1})-[:OF]->(t)
FOREACH (y IN [c] + near | CREATE (s)-[:TOUCHED]->(y))
WITH t, s ORDER BY s.n
WITH t, collect(s) AS steps
FOREACH (j IN range(0, size(steps) - 2) |
  FOREACH (p IN [steps[j]] | FOREACH (q IN [steps[j + 1]] | CREATE (p)-[:NEXT]->(q))))
RETURN count(DISTINCT t) AS tasks
