"""The investigator: the coverage walk, evidence weighing, memory recall and checks, the planners
and their tools.
"""
