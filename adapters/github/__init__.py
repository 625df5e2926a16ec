"""GitHub: the ticket notifier (PyGithub) and the change feed (merged pull requests)."""
