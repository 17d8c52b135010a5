"""Deterministic episode generators and real-data loaders, one folder per benchmark."""
