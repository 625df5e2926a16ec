"""The task kernel: claims with leases and fencing, checkpointed steps, intent-keyed actions, the
worker loop.
"""
