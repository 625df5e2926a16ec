"""Slack: the notifier (Web API via slack-sdk), its rendering of notices, and the payload models
Slack posts to us.
"""
