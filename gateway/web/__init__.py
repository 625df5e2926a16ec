"""Mission control: the web pages (`pages`), sign-in (`session`), live updates (`live`)."""
