"""Sensors: world state -> observations with Gymnasium spaces (RGB-D, semantic, pose, microphones)."""
