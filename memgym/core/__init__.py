"""Contracts every room shares: records, registries, configs, seeding, chat content, results."""
