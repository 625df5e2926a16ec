// The stored steps of a task, in order, so a new owner can resume at step n + 1
// (`epoch`: the claim that wrote the step).
MATCH (s:Step {task_id: $task_id})
RETURN s.n AS n, s.tool AS tool, s.args AS args, s.result AS result, s.epoch AS epoch
ORDER BY s.n
