// How many times a task was paused (pause_task), 0 when never.
MATCH (t:Task {id: $task_id})
RETURN coalesce(t.pauses, 0) AS pauses
