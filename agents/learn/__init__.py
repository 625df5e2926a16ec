"""The learner: engineers' verdicts become trust, playbooks and preferences; retention of old
incidents.
"""
