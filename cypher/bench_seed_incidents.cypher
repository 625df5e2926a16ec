// bench/memory.py only: incidents $prefix<k> for k in $from..$to, each resolved at $resolved_at
// with one alert on a component $component_prefix<k % $spread> carrying $labels_json /
// $annotations_json / $values_json, and a done investigate task with $steps steps whose stored
// result is $result: the shape (and about the size) of what triage and the agents store.
UNWIND range($from, $to) AS k
MATCH (c:Component {name: $component_prefix + toString(k % $spread)})
CREATE (i:Incident {id: $prefix + toString(k), status: 'resolved', severity: 'critical',
  severity_rank: 4, title: 'HighErrorRate on ' + c.name, opened_at: $resolved_at - 600000,
  received_at: $resolved_at - 600000, resolved_at: $resolved_at, group_keys: ['{}:{bench}'],
  firing: 0, components: [c.name], root_cause: c.name})
CREATE (a:Alert {key: $prefix + toString(k) + '@a', fingerprint: toString(k), status: 'resolved',
  alertname: 'HighErrorRate', severity: 'critical', starts_at_ms: $resolved_at - 600000,
  ends_at_ms: $resolved_at, labels_json: $labels_json, annotations_json: $annotations_json,
  values_json: $values_json, group_key: '{}:{bench}', component: c.name, title: 'HighErrorRate'})
CREATE (i)-[:HAS_ALERT {via: c.name}]->(a), (a)-[:ON]->(c)
CREATE (t:Task {id: 'task-' + $prefix + toString(k), kind: 'investigate', status: 'done',
  owner: '', attempt_id: '', epoch: 0, attempts: 1, lease_until: 0, created_at: $resolved_at,
  incident_id: i.id})-[:FOR]->(i)
FOREACH (n IN range(1, $steps) |
  CREATE (:Step {task_id: t.id, n: n, tool: 'walk_path', args: '{}', result: $result,
    at: $resolved_at})-[:OF]->(t))
RETURN count(i) AS incidents
